"""`python -m rlm_harness [config-json]`: runs the kernel (the host runs the same through a bootstrap)."""
from rlm_harness.main import main

main()
