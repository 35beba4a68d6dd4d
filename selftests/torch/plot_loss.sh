#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The loss curves of ddp_test.py (CSV step,gloo,kcoll) as a PNG: both
# backends' loss, and on a second axis the relative difference between
# them (log scale; 0 is drawn at 1e-12, the floor of the axis).
#   plot_loss.sh ddp_loss.csv ddp_loss.png
set -eu
csv=${1:?usage: plot_loss.sh CSV PNG}
png=${2:?usage: plot_loss.sh CSV PNG}
gnuplot <<GP
set terminal pngcairo size 900,540
set output '$png'
set datafile separator ','
set key autotitle columnhead top right
set title 'DDP, 4 ranks: global mean loss per step, gloo vs kcoll'
set xlabel 'step'
set ylabel 'loss'
set y2label '|gloo - kcoll| / gloo'
set logscale y2
set y2range [1e-12:1]
set y2tics
set ytics nomirror
plot '$csv' using 1:2 with lines lw 3 title 'gloo', \
     '' using 1:3 with lines lw 1 dt 2 title 'kcoll', \
     '' using 1:(abs(\$2-\$3)/\$2 > 1e-12 ? abs(\$2-\$3)/\$2 : 1e-12) axes x1y2 \
        with points pt 7 ps 0.4 title 'relative difference (right axis)'
GP
echo "plot: $png"
