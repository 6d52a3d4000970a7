import torch

x = 1
raise RuntimeError("plugin setup failed on purpose")
