"""`python -m benchmarks` (or `make benchmark`): every benchmark, JSON under benchmarks/results/."""
from . import balora_step, ci_budget, cli_startup, comparison_oracles, ddsvm, fedcdwa, lambda_grpo_step, lbm_speed, metadistill, minedraft_decode, mip_early_stop, neural_qaoa2, optimizer_steps, orchestration, prox_speed, se3_sync_speed, sw_drso, unidrag_surrogate, zeroth_hessian

if __name__ == "__main__":
    se3_sync_speed.main()
    mip_early_stop.main()
    neural_qaoa2.main()
    optimizer_steps.main()
    lbm_speed.main()
    unidrag_surrogate.main()
    ddsvm.main()
    metadistill.main()
    fedcdwa.main()
    sw_drso.main()
    zeroth_hessian.main()
    prox_speed.main()
    lambda_grpo_step.main()
    comparison_oracles.main()
    sw_drso.main()
    balora_step.main()
    minedraft_decode.main()
    orchestration.main()
    cli_startup.main()
    ci_budget.main([])
