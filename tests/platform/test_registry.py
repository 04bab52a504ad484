"""dvc.yaml, the flows registry, the root report stage and prefect.yaml agree with each other."""


import yaml

from stages.spec import paper_pipeline, paper_stages, papers
from tests.conftest import ROOT


def test_every_paper_has_flows_readme_and_params():
    assert papers(ROOT), "no paper registered"
    for paper in papers(ROOT):
        module = paper_pipeline(paper)
        assert [s.stage for s in paper_stages(ROOT, paper)] == list(module.STAGES)
        assert (ROOT / "stages" / paper / "README.md").exists()
        assert (ROOT / "stages" / paper / "params.yaml").exists()


def test_stage_commands_run_from_the_root_through_the_process_entry():
    for paper in papers(ROOT):
        raw = yaml.safe_load((ROOT / "stages" / paper / "dvc.yaml").read_text())["stages"]
        for spec in paper_stages(ROOT, paper):
            body = raw[f"{paper}-{spec.stage}"]
            assert body["wdir"] == "../.."
            assert spec.cmd == f"python -m stages {paper} {spec.stage}"
            assert spec.params["params.yaml"] == ("profile",), "every stage must rerun when the profile changes"
            assert all((ROOT / dep).exists() or dep.startswith("data/") for dep in spec.deps)


def test_root_report_depends_on_every_papers_claims():
    deps = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]["report"]["deps"]
    for paper in papers(ROOT):
        assert f"data/{paper}/claims.json" in deps
        assert f"data/{paper}/claims.json" in paper_stages(ROOT, paper)[-1].outs


def test_prefect_yaml_deploys_every_paper():
    deployments = {d["name"]: d for d in yaml.safe_load((ROOT / "prefect.yaml").read_text())["deployments"]}
    for paper in papers(ROOT):
        deployment = deployments[f"{paper}-pipeline"]
        assert deployment["parameters"]["paper"] == paper
        assert deployment["schedules"][0]["cron"]
        assert deployment["work_pool"]["name"] == "papers-process"
