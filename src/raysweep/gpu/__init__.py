"""GPUs: NVML inventory (``inventory``), ``--gpus`` selection and id mapping
(``allocation``), and the background resource sampler (``monitor``).

nvidia-ml-py is imported lazily, so importing this package is cheap and works on
machines without an NVIDIA driver.
"""
