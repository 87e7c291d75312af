// Original file: tailor/v1/tailor_api.proto

export const JobStatus = {
  JOB_STATUS_UNSPECIFIED: 'JOB_STATUS_UNSPECIFIED',
  JOB_STATUS_PENDING: 'JOB_STATUS_PENDING',
  JOB_STATUS_RUNNING: 'JOB_STATUS_RUNNING',
  JOB_STATUS_COMPLETED: 'JOB_STATUS_COMPLETED',
  JOB_STATUS_FAILED: 'JOB_STATUS_FAILED',
} as const;

export type JobStatus =
  | 'JOB_STATUS_UNSPECIFIED'
  | 0
  | 'JOB_STATUS_PENDING'
  | 1
  | 'JOB_STATUS_RUNNING'
  | 2
  | 'JOB_STATUS_COMPLETED'
  | 3
  | 'JOB_STATUS_FAILED'
  | 4

export type JobStatus__Output = typeof JobStatus[keyof typeof JobStatus]
