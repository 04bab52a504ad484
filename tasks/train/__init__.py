"""Shared training harness of the optimizer papers.

corpus: the stdlib character corpus; charlm: the tiny decoder-only Transformer; digits: the
scikit-learn digits classifiers and fake quantisation; synthetic: quadratic, matrix least squares,
hinge SVM and nonsmooth Rosenbrock problems; loop: one closure-based training loop for every
optimizer. Import from the module files, e.g. `from tasks.train.loop import run_training`.
"""
