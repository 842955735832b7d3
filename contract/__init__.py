"""The bottom layer every other package may import: the job-spec contract (`contract.jobspec`) and the
user-facing error type (`contract.errors`). It imports nothing from gpu-advisor."""
