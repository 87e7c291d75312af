// Original file: tailor/v1/tailor_api.proto

import type { JobKind as _tailor_v1_JobKind, JobKind__Output as _tailor_v1_JobKind__Output } from '../../tailor/v1/JobKind.ts';
import type { JobStatus as _tailor_v1_JobStatus, JobStatus__Output as _tailor_v1_JobStatus__Output } from '../../tailor/v1/JobStatus.ts';
import type { JobError as _tailor_v1_JobError, JobError__Output as _tailor_v1_JobError__Output } from '../../tailor/v1/JobError.ts';

export interface Job {
  'jobId'?: (string);
  'kind'?: (_tailor_v1_JobKind);
  'status'?: (_tailor_v1_JobStatus);
  'progress'?: (number | string);
  'resultUrl'?: (string);
  'error'?: (_tailor_v1_JobError | null);
  'createdAt'?: (string);
  'updatedAt'?: (string);
  'attempt'?: (number);
  '_resultUrl'?: "resultUrl";
}

export interface Job__Output {
  'jobId': (string);
  'kind': (_tailor_v1_JobKind__Output);
  'status': (_tailor_v1_JobStatus__Output);
  'progress': (number);
  'resultUrl'?: (string);
  'error': (_tailor_v1_JobError__Output | null);
  'createdAt': (string);
  'updatedAt': (string);
  'attempt': (number);
  '_resultUrl'?: "resultUrl";
}
