"""Rank catalog offers for a JobSpec by total job cost: memory first, then topology, then price and billing model."""

from tools.ranking.costing import CostingJob, ShapeCosts
from tools.ranking.lead import lead_over
from tools.ranking.plans import nodes_for, plan_shape
from tools.ranking.rank import RankingResult, prepare_candidates, rank_offers, ranking_key
from tools.ranking.scale_out import MULTI_NODE_MIN_GPUS, fewest_nodes

__all__ = [
    "MULTI_NODE_MIN_GPUS",
    "CostingJob",
    "RankingResult",
    "ShapeCosts",
    "fewest_nodes",
    "lead_over",
    "nodes_for",
    "plan_shape",
    "prepare_candidates",
    "rank_offers",
    "ranking_key",
]
