// Original file: tailor/v1/tailor_api.proto

export const JobKind = {
  JOB_KIND_UNSPECIFIED: 'JOB_KIND_UNSPECIFIED',
  JOB_KIND_TRY_ON: 'JOB_KIND_TRY_ON',
  JOB_KIND_REMOVE_BACKGROUND: 'JOB_KIND_REMOVE_BACKGROUND',
} as const;

export type JobKind =
  | 'JOB_KIND_UNSPECIFIED'
  | 0
  | 'JOB_KIND_TRY_ON'
  | 1
  | 'JOB_KIND_REMOVE_BACKGROUND'
  | 2

export type JobKind__Output = typeof JobKind[keyof typeof JobKind]
