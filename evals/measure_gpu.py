#!/usr/bin/env python3
"""Measure peak GPU memory of short training runs, for calibrating the VRAM estimator.

Prepared for a session that has a GPU machine (H200, about 139 GiB), torch, transformers and
peft installed, and no network. Nothing is downloaded: models are random-initialised from
Llama-style configs written below (shapes of Llama 3.2 1B, Llama 3.2 3B and Llama 3.1 8B, from
shared/reference/memory-formulas.md section 4). Inputs are random token ids. Tokenizers are not needed.

For each planned configuration the script:
  1. builds (or reuses) the model: pure bf16, fp32 weights for bf16 autocast ("amp_bf16"), or a
     bf16 base with a PEFT LoRA adapter (r=16 on q,v or on all linear layers);
  2. creates a fresh torch.optim.AdamW over the trainable parameters (fused=True, the HF Trainer default, or
     foreach=True for the twins that measure its state-sized temporary);
  3. calls torch.cuda.empty_cache() and torch.cuda.reset_peak_memory_stats();
  4. runs 3 training steps (forward with labels=input_ids, backward, optimizer.step, zero_grad);
  5. records torch.cuda.max_memory_allocated() and max_memory_reserved() in GiB.
The peak therefore covers forward, backward and the optimizer step, including the first step,
where the AdamW states are allocated. An out-of-memory error is caught and recorded as an OOM row with an empty
measured_gib.

Output: rows in the schema of evals/calibration/published.csv, two per configuration
(`<id>-alloc` with metric=allocated and `<id>-resv` with metric=reserved). Rows are appended and
flushed as each configuration finishes, so a run that times out still leaves its results.
The path is --out, or $OUT/measured.csv when OUT is set, or ./measured.csv.

  python evals/measure_gpu.py --dry-run          # print the plan only; needs no torch
  python evals/measure_gpu.py                    # run everything (about 4-8 minutes on one H200)
  python evals/measure_gpu.py --only 1b --budget-s 120

Only the standard library is imported at module level. torch, transformers and peft are imported
inside the run path, so --dry-run works where they are not installed.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # run as a script: the plan module sits beside it
from measure_gpu_plan import (
    ALL_LINEAR,
    COLUMNS,
    GIB,
    LORA_ALPHA,
    LORA_RANK,
    MODELS,
    QV_TARGETS,
    STEPS,
    Plan,
    build_plan,
    default_out,
    print_plan,
)


def run(plans: list[Plan], out_path: str, budget_s: float, steps: int, device_str: str = "cuda") -> int:
    import gc as pygc

    import torch
    import transformers
    from transformers import LlamaConfig, LlamaForCausalLM

    if device_str == "cuda" and not torch.cuda.is_available():
        print("No CUDA device: nothing measured. Use --dry-run to see the plan.", file=sys.stderr)
        return 2
    try:
        import peft
        from peft import LoraConfig, get_peft_model

        peft_version = peft.__version__
    except ImportError:  # LoRA plans are skipped without peft
        peft = None
        peft_version = "absent"

    device = torch.device(device_str)  # "cpu" only for smoke-testing the code path with tiny shapes
    gpu_name = torch.cuda.get_device_name(device)
    total_gib = torch.cuda.get_device_properties(device).total_memory / GIB
    short_gpu = "H200" if "H200" in gpu_name else gpu_name
    source = f"measured here ({short_gpu}, torch {torch.__version__}, transformers {transformers.__version__})"
    print(
        f"GPU: {gpu_name} ({total_gib:.1f} GiB), torch {torch.__version__}, "
        f"transformers {transformers.__version__}, peft {peft_version}"
    )

    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    fh = open(out_path, "w", newline="")  # noqa: SIM115  (kept open while rows are written, closed at the end)
    writer = csv.DictWriter(fh, fieldnames=COLUMNS)
    writer.writeheader()
    fh.flush()

    def cleanup():
        pygc.collect()
        torch.cuda.empty_cache()

    def build(p: Plan):
        spec = dict(MODELS[p.model])
        name = spec.pop("name")
        cfg = LlamaConfig(
            **spec,
            rope_theta=500000.0,
            max_position_embeddings=8192,
            use_cache=False,
            attention_bias=False,
            mlp_bias=False,
            hidden_act="silu",
            rms_norm_eps=1e-5,
        )
        cfg._attn_implementation = "sdpa"
        dtype = torch.float32 if p.precision == "amp_bf16" else torch.bfloat16
        torch.manual_seed(0)
        with torch.device(device):
            try:  # transformers >= 4.56 calls it dtype; older versions take torch_dtype
                model = LlamaForCausalLM._from_config(cfg, attn_implementation="sdpa", dtype=dtype)
            except TypeError:
                model = LlamaForCausalLM._from_config(cfg, attn_implementation="sdpa", torch_dtype=dtype)
        if next(model.parameters()).dtype != dtype:
            model = model.to(dtype)
        model.config.use_cache = False
        if p.method == "lora":
            targets = ALL_LINEAR if p.targets == "all-linear" else QV_TARGETS
            lcfg = LoraConfig(
                r=LORA_RANK,
                lora_alpha=LORA_ALPHA,
                lora_dropout=0.0,
                target_modules=targets,
                bias="none",
                task_type="CAUSAL_LM",
            )
            model = get_peft_model(model, lcfg)
        model.train()
        return name, model

    def set_gc(model, on: bool):
        base = model.get_base_model() if hasattr(model, "get_base_model") else model
        if on:
            base.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        else:
            base.gradient_checkpointing_disable()
        base.config.use_cache = False

    def write(p: Plan, name, nparams, ntrain, alloc, resv, note):
        common = dict(
            split="holdout",
            model=name,
            params_b=round(nparams / 1e9, 4),
            method=p.method,
            precision=p.precision,
            optimizer="adamw",
            optimizer_impl=p.impl,
            micro_batch_size=p.mbs,
            seq_len=p.seq,
            gradient_checkpointing="true" if p.gc else "false",
            flash_attention="true",
            lora_rank=LORA_RANK if p.method == "lora" else "",
            lora_targets=p.targets,
            num_gpus=1,
            sharding="none",
            offload="none",
            source=source,
        )
        base_note = (
            f"Random-init {MODELS[p.model]['name']} shapes ({nparams:,} params, {ntrain:,} trainable), "
            f"GPU {gpu_name}. {steps} steps on random token ids (labels=input_ids, HF causal-LM loss), "
            f"attn_implementation=sdpa, torch.optim.AdamW(lr=1e-5, {p.impl}=True). "
            + ("Weights fp32 + torch.autocast(bf16). " if p.precision == "amp_bf16" else "")
            + (
                "Pure bf16 weights, grads and AdamW states. "
                if (p.precision == "bf16" and p.method == "full_finetune")
                else ""
            )
            + (
                f"LoRA via peft {peft_version}: r={LORA_RANK}, alpha={LORA_ALPHA}, dropout 0, base bf16, adapter dtype "
                f"as peft sets it (autocast_adapter_dtype default). "
                if p.method == "lora"
                else ""
            )
            + ("Gradient checkpointing: HF gradient_checkpointing_enable(use_reentrant=False). " if p.gc else "")
            + "Peak over forward, backward and optimizer step after empty_cache + reset_peak_memory_stats; "
            + f"PYTORCH_CUDA_ALLOC_CONF={os.environ.get('PYTORCH_CUDA_ALLOC_CONF', 'unset')}. "
            + note
        )
        for suffix, metric, val in (("alloc", "allocated", alloc), ("resv", "reserved", resv)):
            row = dict(
                common,
                id=f"{p.slug}-{suffix}",
                metric=metric,
                measured_gib="" if val is None else round(val, 3),
                notes=base_note,
            )
            writer.writerow(row)
        fh.flush()

    t_start = time.time()
    current_group, model, name = None, None, None
    done = 0
    for p in plans:
        elapsed = time.time() - t_start
        if elapsed > budget_s:
            print(f"SKIP {p.slug}: time budget {budget_s:.0f}s used ({elapsed:.0f}s)")
            continue
        if p.method == "lora" and peft is None:
            print(f"SKIP {p.slug}: peft not installed")
            continue
        try:
            if p.group != current_group:
                model = None
                cleanup()
                t0 = time.time()
                name, model = build(p)
                current_group = p.group
                print(
                    f"built {p.group} in {time.time() - t0:.1f}s, "
                    f"{torch.cuda.memory_allocated() / GIB:.2f} GiB allocated"
                )
            set_gc(model, p.gc)
            nparams = sum(x.numel() for x in model.parameters())
            trainable = [x for x in model.parameters() if x.requires_grad]
            ntrain = sum(x.numel() for x in trainable)
            vocab = MODELS[p.model]["vocab_size"]
            model.zero_grad(set_to_none=True)
            cleanup()
            weights_gib = torch.cuda.memory_allocated() / GIB
            torch.cuda.reset_peak_memory_stats()
            opt = torch.optim.AdamW(
                trainable, lr=1e-5, **{p.impl: True} if p.impl != "for_loop" else {"foreach": False}
            )
            t0 = time.time()
            status = "ok"
            loss = ids = None
            try:
                for _ in range(steps):
                    ids = torch.randint(0, vocab, (p.mbs, p.seq), device=device)
                    if p.precision == "amp_bf16":
                        with torch.autocast("cuda", dtype=torch.bfloat16):
                            loss = model(input_ids=ids, labels=ids).loss
                    else:
                        loss = model(input_ids=ids, labels=ids).loss
                    loss.backward()
                    opt.step()
                    opt.zero_grad(set_to_none=True)
                    del loss, ids
                torch.cuda.synchronize()
                alloc = torch.cuda.max_memory_allocated() / GIB
                resv = torch.cuda.max_memory_reserved() / GIB
            except torch.cuda.OutOfMemoryError as e:
                status = "OOM"
                alloc = resv = None
                oom_msg = str(e).split("\n")[0][:200]
            dt = time.time() - t0
            del opt
            model.zero_grad(set_to_none=True)
            # opt state and activations freed; keep the model for the next plan in this group
            if status == "ok":
                note = (
                    f"Weights+adapters before the steps: {weights_gib:.2f} GiB allocated. {steps} steps took {dt:.1f}s."
                )
                print(f"{p.slug}: alloc {alloc:.2f} GiB, reserved {resv:.2f} GiB ({dt:.1f}s)")
            else:
                note = f"OOM on a {total_gib:.1f} GiB device (measured_gib left empty): {oom_msg}"
                print(f"{p.slug}: OOM ({dt:.1f}s)")
            write(p, name, nparams, ntrain, alloc, resv, note)
            done += 1
            loss = ids = trainable = None  # drop references so a group switch frees the old model  # noqa: F841  (assigning None drops the references)
            cleanup()
        except torch.cuda.OutOfMemoryError as e:  # OOM while building the model
            print(f"{p.slug}: OOM while building: {str(e)[:200]}")
            model, current_group, trainable, opt = None, None, None, None  # noqa: F841  (assigning None drops the references)
            cleanup()
    fh.close()
    print(f"wrote {done} configurations ({2 * done} rows) to {out_path} in {time.time() - t_start:.0f}s")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dry-run", action="store_true", help="print the planned configurations and exit")
    ap.add_argument("--out", default=None, help="CSV path (default $OUT/measured.csv or ./measured.csv)")
    ap.add_argument(
        "--only", default=None, help="run only configurations whose id contains this substring (e.g. 1b, lora, gcon)"
    )
    ap.add_argument(
        "--budget-s",
        type=float,
        default=420.0,
        help="stop starting new configurations after this many seconds (default 420)",
    )
    ap.add_argument("--steps", type=int, default=STEPS, help=f"training steps per configuration (default {STEPS})")
    args = ap.parse_args(argv)

    plans = build_plan()
    if args.only:
        plans = [p for p in plans if args.only in p.slug]
    if args.dry_run:
        print_plan(plans)
        print(f"(dry run: nothing executed; output would go to {args.out or default_out()})")
        return 0
    return run(plans, args.out or default_out(), args.budget_s, args.steps)


if __name__ == "__main__":
    sys.exit(main())
