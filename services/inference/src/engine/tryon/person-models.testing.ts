/**
 * For tests: the four person networks (`PersonModels`) opened on the CPU from the built models, and
 * their release. One place for the set-up the person, sleeve and tuck tests share.
 */
import { loadModelSpec } from '../manifest.ts'
import { ModelSession } from '../session.ts'
import type { PersonModels } from './person.ts'
import { TRYON_MODELS } from './tryon-engine.ts'

export async function openPersonModels(
  modelsDir: string,
): Promise<{ models: PersonModels; release: () => Promise<void> }> {
  const opened: ModelSession[] = []
  const open = async (name: string) => {
    const s = await ModelSession.open(await loadModelSpec(modelsDir, name), {
      executionProviders: ['cpu'],
    })
    opened.push(s)
    return s
  }
  const release = async () => {
    await Promise.all(opened.map((s) => s.release()))
  }
  try {
    const models = {
      detector: await open(TRYON_MODELS.detector),
      poseFull: await open(TRYON_MODELS.poseFull),
      poseHeavy: await open(TRYON_MODELS.poseHeavy),
      selfie: await open(TRYON_MODELS.selfie),
    }
    return { models, release }
  } catch (err) {
    await release()
    throw err
  }
}
