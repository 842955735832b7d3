"""Rank catalog offers for a JobSpec by total job cost: memory first, then topology, then price and billing model.
"""

from tools.ranking.rank import RankingResult, rank_offers

__all__ = ['RankingResult', 'rank_offers']
