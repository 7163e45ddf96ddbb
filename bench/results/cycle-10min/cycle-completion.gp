# ipclab plot: cycle completion time over the run
# from results.json; the numbers are in cycle-completion.dat (tab-separated, header row).
# Restyle freely, then redraw cycle-completion.png and cycle-completion.svg with: gnuplot cycle-completion.gp
W = 1000
H = 600
set datafile separator "\t"
set datafile missing "NaN"
set grid
set key outside right top noenhanced
set title "completion time over the run (worst of each point; x = xrun)"
set xlabel "time in the window (s)"
set ylabel "completion (ms)"
set logscale y
set yrange [*:*]
set arrow from graph 0, first 1.333333 to graph 1, first 1.333333 nohead dt 2 lc rgb "red"
set label "deadline" at graph 0.01, first 1.333333 offset 0,0.6 tc rgb "red"
do for [fmt in "png svg"] {
	if (fmt eq "svg") {
		set terminal svg size W,H noenhanced background "white"
	} else {
		if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
			set terminal pngcairo size W,H noenhanced
		} else {
			set terminal png size W,H noenhanced
		}
	}
	set output "cycle-completion." . fmt
	plot for [k=0:1] "cycle-completion.dat" index k using 1:2 with lines lw 1 title columnheader(2), \
	     for [k=0:1] "" index k using 1:3 with points pt 2 ps 1 lc rgb "red" notitle
	set output
}
