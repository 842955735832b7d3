"""Rank catalog offers for a JobSpec by total job cost: memory first, then topology, then price and billing model.
"""

from tools.ranking.rank import RankingResult, rank_offers

from tools.ranking.costing import CostingJob
from tools.ranking.scale_out import MULTI_NODE_MIN_GPUS
from tools.ranking.costing import ShapeCosts
from tools.ranking.scale_out import fewest_nodes
from tools.ranking.rank import nodes_for
from tools.ranking.rank import plan_shape

__all__ = ["CostingJob", "MULTI_NODE_MIN_GPUS", "ShapeCosts", "fewest_nodes", "nodes_for", "plan_shape", 'RankingResult', 'rank_offers']
