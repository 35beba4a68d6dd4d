#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-torch: the kcoll backend of torch.distributed on this host,
# without the module (selftests/torch/host_test.py), with Debian's
# /usr/bin/python3 (TORCH_PY) and the extension in KCOLL_TORCH_DIR.
set -eu
py=${TORCH_PY:-/usr/bin/python3}
dir=${KCOLL_TORCH_DIR:?}
ls "$dir"/kcoll_torch*.so >/dev/null
PYTHONPATH=$dir${PYTHONPATH:+:$PYTHONPATH} exec "$py" "$(dirname "$0")/host_test.py"
