"""ddsvm: DDSVM, a differentiable framework for deep support vector machines (ICML 2026; abstract only, method
reconstructed as stages/ddsvm/README.md says). Deep features trained against an OvR linear SVM refitted on them,
pushed along the SVM's margin-widening normal on the unit sphere, against CE, CE + post-hoc SVM and cosine-CE on
data-scarce digits.

- params.py: the typed Params of stages/ddsvm/params.yaml.
- push.py: the push direction (options A/B/C), tangent projection, pushed target, push loss (pure functions).
- model.py: the backbones (small CNN, small ResNet, MLP) and heads (linear, cosine).
- training.py: the alternating loop and its baselines, one trainer; both read-outs.
- model_io.py: a trained model in one safetensors file.
- experiments.py: one pipeline run (train and save; evaluate from the saved model).
- pipeline.py: the Prefect flows generate, train, evaluate (`STAGES`).
- claims.py, plots.py: the claim checks C1-C5 and the figures.
- cli.py: `papers ddsvm fit/predict` on a user's CSV.
- paper.py: the declaration (title, stages with their inputs and outputs, the `papers ddsvm` command).
"""
