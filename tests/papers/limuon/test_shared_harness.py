"""What the shared harness promises across papers: one char-LM runner, so one run."""
import torch

from tasks.train.charlm import CharLMConfig


def test_one_runner_one_run_muon_is_the_same_in_both_papers_that_train_the_char_lm():
    """softsignum's and limuon's char-LM recipes both call train_charlm: with the same optimizer settings they
    produce the same run to the bit (the reconciliation of issue 11)."""
    from flows.limuon.experiments import MuonFamily
    from flows.limuon.experiments import charlm_run as limuon_charlm
    from flows.softsignum.experiments import charlm_run as softsignum_charlm
    from tasks.train.charlm import CharLMSetting
    from tasks.train.corpus import CharCorpus

    generator = torch.Generator().manual_seed(0)
    corpus = CharCorpus(train=torch.randint(0, 98, (4000,), generator=generator),
                        val=torch.randint(0, 98, (600,), generator=generator), sha256="-", python_version="-", n_chars=4600, modules=())
    setting = CharLMSetting(steps=6, batch=4, eval_every=3, eval_windows=4,
                            config=CharLMConfig(context=16, d_model=16, n_heads=2, n_layers=1))
    ours = softsignum_charlm(corpus, "muon", 3, setting=setting, lr=0.02,
                             options={"momentum": 0.95, "aux_lr": 3e-3})
    hp = MuonFamily(lr=0.02, momentum=0.95, nesterov=True, weight_decay=0.0, beta=0.1, oversampling=2,
                    orthogonalizer="ns5", clip=1.0, aux_lr=3e-3)
    theirs = limuon_charlm(corpus, "muon", setting, hp, 3)
    assert [e["loss"] for e in ours["evals"]] == [e["loss"] for e in theirs["evals"]]
    assert [row["loss"] for row in ours["curve"]] == [row["loss"] for row in theirs["curve"]]
