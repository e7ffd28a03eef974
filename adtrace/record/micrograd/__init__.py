"""micrograd's engine, and learners' Value classes of its shape: hooked, engine-neutral at the output."""
