"""The topology checker over many candidate shapes at once (issue 27): one array search over every shape of a job
(`search`, with `shapes` and `comm`), its per-shape Assessments (`assess`), and whether memory alone holds the job
(`holds`); the per-shape search in tools.jobtime.topology stays the reference."""

from tools.jobtime.batch.assess import assess_many
from tools.jobtime.batch.holds import holds_many

__all__ = ["assess_many", "holds_many"]
