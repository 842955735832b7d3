"""Stable entry ids for the topics the agent's writer cites, so a recommendation can point at the right entry.

Cite with `kb.entry(TOPIC_ENTRY["spot"], language)`; `topic_entry(topic, fine_tuning=True)` gives the
fine-tuning article's entry where that article has its own.
"""

from __future__ import annotations

TOPIC_ENTRY: dict[str, str] = {
    "spot": "training.faq_spot",
    "interconnect": "training.faq_interconnect",
    "memory": "training.faq_memory",
    "multi_gpu": "training.faq_multi_gpu",
    "multi_node": "training.scale_multi_node",
    "lora_qlora": "fine_tuning.method_lora_qlora",
    "full_finetune": "fine_tuning.method_full",
    "precision": "training.spec_low_precision",
    "vram": "training.spec_vram",
    "bandwidth": "training.spec_memory_bandwidth",
    "billing": "training.provider_billing",
    "storage": "training.provider_storage",
    "checkpointing": "training.provider_checkpointing",
    "consumer_cards": "fine_tuning.match_consumer",
}
"""Topic -> entry id (training article, or fine-tuning where only that article covers the topic)."""

FINE_TUNING_TOPIC_ENTRY: dict[str, str] = {
    "spot": "fine_tuning.faq_spot",
    "memory": "fine_tuning.faq_memory",
    "multi_gpu": "fine_tuning.faq_single_vs_multi",
    "interconnect": "fine_tuning.match_multi_gpu_node",
    "precision": "fine_tuning.precision",
    "billing": "fine_tuning.provider_billing",
    "storage": "fine_tuning.provider_storage",
    "checkpointing": "fine_tuning.provider_checkpointing",
    "multi_node": "fine_tuning.provider_multi_node",
}
"""Topic -> entry id of the fine-tuning article, used for LoRA/QLoRA/full fine-tuning jobs."""


def topic_entry(topic: str, *, fine_tuning: bool = False) -> str:
    """Entry id for a topic, preferring the fine-tuning article's entry for fine-tuning jobs; KeyError if unknown."""
    if fine_tuning and topic in FINE_TUNING_TOPIC_ENTRY:
        return FINE_TUNING_TOPIC_ENTRY[topic]
    if topic not in TOPIC_ENTRY:
        raise KeyError(f"unknown topic '{topic}'; known: {', '.join(sorted(TOPIC_ENTRY))}")
    return TOPIC_ENTRY[topic]
