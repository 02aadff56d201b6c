"""Synthetic data with a known truth: the seeded judge simulator and the datasets built on it.

- ``simulate``: :func:`~data.synthetic.simulate.simulate_with_truth` (and ``simulate``), a
  seeded synthetic judge over datasets of any size, with the truth it was drawn from;
- ``simulate_bias``: the simulator's known biases (texts with known length and style
  features, injected cycles);
- ``demo``: :func:`~data.synthetic.demo.demo_dataset`, the offline demo the app opens on
  (hand-written texts in ``demo_texts.json``);
- ``bias_demo``: a simulated judge with known biases for the Judge bias page, and the table
  of true values beside what the bias tables recover.
"""
