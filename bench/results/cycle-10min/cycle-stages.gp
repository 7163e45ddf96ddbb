# ipclab plot: cycle stages: wait and busy per period
# from results.json; the numbers are in cycle-stages.dat (tab-separated, header row).
# Restyle freely, then redraw cycle-stages.png and cycle-stages.svg with: gnuplot cycle-stages.gp
W = 1000
H = 600
set datafile separator "\t"
set datafile missing "NaN"
set grid
set key outside right top noenhanced
set title "each stage's median wait (woken) and busy (processing), % of the period"
set style data histograms
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.75
set ylabel "% of the period"
set yrange [0:*]
set xtics rotate by -45 noenhanced
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
	set output "cycle-stages." . fmt
	plot "cycle-stages.dat" using 2:xtic(1) title "wait p50", "" using 3 title "busy p50"
	set output
}
