"""Layout codes a kernel module defines (FlashInfer's `quantization/kernels/mxfp4_quantize.py: SF_LAYOUT_128x4 = 0`)."""
ROWS_PADDED = 4
