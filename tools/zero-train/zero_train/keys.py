"""DeepSpeed's config keys that zero-train does not apply, each with why.

zero-train applies the keys in resolve.py; every other DeepSpeed key it
knows is listed here and printed as "ignored KEY: REASON". A key in neither
place is an error (a typo, or a key of another tool).
"""

__all__ = ["IGNORED_TOP", "IGNORED_ZERO", "IGNORED_FP16", "IGNORED_BF16",
           "IGNORED_ACTIVATION_CHECKPOINTING", "IGNORED_OPTIMIZER_PARAMS"]

_MONITOR = "monitoring goes to run.metrics (JSON lines; scripts/plot-metrics draws them)"
_NOT_IMPLEMENTED = "not implemented in Zero"

# Top-level keys: the whole value is ignored.
IGNORED_TOP = {
    "steps_per_print": "the program prints every step (run.quiet = true prints none)",
    "wall_clock_breakdown": "every step line and metrics record has the step's time, "
                            "tokens/s and communication bytes",
    "memory_breakdown": "the program prints its per-rank memory plan and the measured peak",
    "dump_state": "the program's state is fixed at compile time (the program's --print-config)",
    "prescale_gradients": "gradients are averaged once, in their reduction",
    "gradient_predivide_factor": "gradients are averaged once, in their reduction",
    "communication_data_type": "collectives run in the gradients' own type "
                               "(bf16 with bf16.enabled, else fp32)",
    "seq_parallel_communication_data_type": "no sequence parallelism",
    "sparse_gradients": "embedding gradients are dense",
    "amp": "NVIDIA Apex AMP is not used; bf16.enabled selects mixed precision",
    "zero_allow_untested_optimizer": "the optimizer is always Zero's AdamW",
    "zero_force_ds_cpu_optimizer": "the optimizer is always Zero's AdamW",
    "flops_profiler": _MONITOR,
    "wandb": _MONITOR,
    "csv_monitor": _MONITOR,
    "comet": _MONITOR,
    "comms_logger": "every step's bytes per collective are in run.metrics",
    "checkpoint": "Zero's checkpoints are run.checkpoint_dir / run.checkpoint_every "
                  "(docs/checkpoints.md)",
    "load_universal_checkpoint": "Zero's checkpoints re-partition across world sizes "
                                 "and stages on their own (docs/checkpoints.md)",
    "elasticity": "the world size comes from the launcher; zero-train compiles for it",
    "autotuning": "no autotuner",
    "compression_training": _NOT_IMPLEMENTED,
    "data_efficiency": _NOT_IMPLEMENTED,
    "curriculum_learning": _NOT_IMPLEMENTED,
    "progressive_layer_drop": _NOT_IMPLEMENTED,
    "eigenvalue": _NOT_IMPLEMENTED,
    "sparse_attention": _NOT_IMPLEMENTED,
    "quantize_training": _NOT_IMPLEMENTED,
    "pipeline": "data parallelism only (no pipeline stages)",
    "aio": "no NVMe offload",
    "nebula": "checkpoints are Zero's own",
    "data_types": "gradients accumulate in their own type",
    "disable_allgather": "parameters are all-gathered where the stage needs it",
    "graph_harvesting": "the program is compiled ahead of time",
    "compile": "the program is compiled ahead of time by zero-compile (Zero's own "
               "compile settings are the zero_compile section)",
}

_OFFLOAD = ("no offload: the CPU target keeps every state in host memory, "
            "the CUDA target in device memory")
_QUANT = "collectives are not quantized"
_MESH = "one flat data-parallel group (no hierarchical partitioning)"

IGNORED_ZERO = {
    "allgather_partitions": "parameters are always all-gathered from their shards",
    "reduce_scatter": "the stage decides: gradients are reduce-scattered at stages 2-3, "
                      "all-reduced at 0-1",
    "contiguous_gradients": "gradients always live in one flat buffer per shard group",
    "offload_optimizer": _OFFLOAD,
    "offload_param": _OFFLOAD,
    "cpu_offload": _OFFLOAD,
    "cpu_offload_params": _OFFLOAD,
    "cpu_offload_use_pin_memory": _OFFLOAD,
    "sub_group_size": "the optimizer updates each shard group as one flat buffer",
    "stage3_max_reuse_distance": "a gathered parameter is freed after its last use and "
                                 "gathered again for the backward",
    "stage3_gather_16bit_weights_on_model_save": "run.export always writes the whole "
                                                 "parameters (f32 safetensors)",
    "stage3_gather_fp16_weights_on_model_save": "run.export always writes the whole "
                                                "parameters (f32 safetensors)",
    "gather_16bit_weights_on_model_save": "run.export always writes the whole parameters "
                                          "(f32 safetensors)",
    "round_robin_gradients": "gradients are reduced in program order",
    "elastic_checkpoint": "Zero's checkpoints re-partition on their own",
    "ignore_unused_parameters": "every parameter of the compiled model is used",
    "load_from_fp32_weights": "resuming always loads the f32 master weights",
    "legacy_stage1": "one stage-1 implementation",
    "zero_hpz_partition_size": _MESH,
    "mics_shard_size": _MESH,
    "mics_hierarchical_params_gather": _MESH,
    "zero_quantized_weights": _QUANT,
    "zero_quantized_nontrainable_weights": _QUANT,
    "zero_quantized_gradients": _QUANT,
    "zeropp_loco_param": _QUANT,
    "memory_efficient_linear": "the matmul kernels keep no extra copies",
    "use_multi_rank_bucket_allreduce": "buckets are reduced as one collective each",
    "pipeline_loading_checkpoint": "no pipeline stages",
    "override_module_apply": "no torch modules at run time",
    "log_trace_cache_warnings": "the schedule of collectives is static (no trace cache)",
    "stage3_module_granularity_threshold": "shard groups are blocks or parameters "
                                           "(compile.grouping)",
    "module_granularity_threshold": "shard groups are blocks or parameters (compile.grouping)",
    "use_all_reduce_for_fetch_params": "parameters are gathered with all-gather",
    "stage3_use_all_reduce_for_fetch_params": "parameters are gathered with all-gather",
    "ratio": _OFFLOAD,
}

IGNORED_FP16 = {k: "fp16 is not enabled" for k in (
    "auto_cast", "loss_scale", "initial_scale_power", "loss_scale_window",
    "hysteresis", "consecutive_hysteresis", "min_loss_scale",
    "fp16_master_weights_and_grads")}

# fp16's keys Zero does not take while fp16 is on, and why.
IGNORED_FP16_ON = {
    "auto_cast": "the model's dtype is f16 already (zero-model --dtype f16); nothing is cast",
    "hysteresis": "every overflow halves the scale and skips the step (torch.amp.GradScaler's "
                  "rule)",
    "consecutive_hysteresis": "every overflow halves the scale and skips the step "
                              "(torch.amp.GradScaler's rule)",
    "min_loss_scale": "the run stops when the scale would fall below 2^-24",
    "fp16_master_weights_and_grads": "master weights and moments are always f32",
}

IGNORED_BF16 = {
    "immediate_grad_update": "gradients are reduced as the schedule of collectives says",
    "check_grad_overflow": "a non-finite loss or gradient norm stops the run "
                           "(docs/guarantees.md)",
    "bf16_master_weights_and_grads": "master weights and moments are always f32",
    "bf16_optimizer_states": "master weights and moments are always f32",
}

IGNORED_ACTIVATION_CHECKPOINTING = {
    "partition_activations": "no tensor axis to partition over (P_a applies with "
                             "tensor_parallel.autotp_size > 1)",
    "cpu_checkpointing": "no tensor axis, so no partitioned checkpoints to offload "
                         "(applies with tensor_parallel.autotp_size > 1)",
    "contiguous_memory_optimization": "zero-buffer-assign already places every "
                                      "activation in one arena",
    "number_checkpoints": "every block is a checkpoint (train-checkpoint policy=block)",
    "synchronize_checkpoint_boundary": "no synchronization points are added",
    "profile": "no per-checkpoint profiling",
}

IGNORED_OPTIMIZER_PARAMS = {
    "torch_adam": "one AdamW implementation (Zero's kernel)",
    "fused": "one AdamW implementation (Zero's kernel)",
    "foreach": "one AdamW implementation (Zero's kernel)",
    "capturable": "one AdamW implementation (Zero's kernel)",
}
