// SPDX-License-Identifier: MIT
// ipclab report: what the script adds to a page that reads without it:
// values under the pointer on line charts (from the data block), series
// toggled from the legend, tables sorted by a column, flame graphs zoomed.
// It builds no markup from data: text goes in through textContent only.
(function () {
	'use strict';
	var data = { figs: {} };
	var el = document.getElementById('ipclab-data');

	try {
		if (el)
			data = JSON.parse(el.textContent);
	} catch (e) {
		data = { figs: {} };
	}
	// a series over time comes as x0, dx and its values: made points here
	Object.keys(data.figs || {}).forEach(function (k) {
		(data.figs[k].s || []).forEach(function (s) {
			if (s.p || !s.y)
				return;
			s.p = [];
			s.y.forEach(function (y, i) {
				if (y !== null)
					s.p.push([s.x0 + i * s.dx, y]);
			});
		});
	});

	function scaled(v, base, units) {
		var u = 0, a = Math.abs(v);

		while (a >= base && u + 1 < units.length) {
			v /= base;
			a /= base;
			u++;
		}
		if (a >= 100 || u === 0)
			return v.toFixed(0) + units[u];
		return v.toFixed(a >= 10 ? 1 : 2) + units[u];
	}

	function fmt(u, v) {
		switch (u) {
		case 'ns': return scaled(v, 1000, ['ns', 'us', 'ms', 's']);
		case 'bytes': return scaled(v, 1024, ['B', 'KiB', 'MiB', 'GiB']);
		case 'per_s': return scaled(v, 1000, ['', 'k', 'M', 'G', 'T']) + '/s';
		case 'Bps': return (v / 1e6).toPrecision(3) + ' MB/s';
		case 'pct': return v.toFixed(1) + ' %';
		case 'pctile': return 'p' + (100 * (1 - 1 / v)).toPrecision(5).replace(/\.?0+$/, '');
		default: return v.toPrecision(4);
		}
	}

	function frac(ax, v) {
		if (ax.log)
			return (Math.log(v) - Math.log(ax.lo)) / (Math.log(ax.hi) - Math.log(ax.lo));
		return (v - ax.lo) / (ax.hi - ax.lo);
	}

	var tip = document.createElement('div');

	tip.className = 'tip';
	document.body.appendChild(tip);

	function hover(svg, fig, ev) {
		var pt = svg.createSVGPoint(), ctm = svg.getScreenCTM(), best = null, bd = 900;

		if (!ctm)
			return;
		pt.x = ev.clientX;
		pt.y = ev.clientY;
		pt = pt.matrixTransform(ctm.inverse());
		fig.s.forEach(function (s, i) {
			var g = svg.querySelector('g.s[data-s="' + i + '"]');

			if (g && g.classList.contains('off'))
				return;
			s.p.forEach(function (p) {
				var x = fig.box[0] + frac(fig.x, p[0]) * (fig.box[2] - fig.box[0]);
				var y = fig.box[3] - frac(fig.y, p[1]) * (fig.box[3] - fig.box[1]);
				var d = (x - pt.x) * (x - pt.x) + (y - pt.y) * (y - pt.y);

				if (d < bd) {
					bd = d;
					best = { s: s, p: p };
				}
			});
		});
		if (!best) {
			tip.style.display = 'none';
			return;
		}
		tip.textContent = best.s.l + '\n' + fmt(fig.x.u, best.p[0] * fig.x.sc) + ', ' +
			fmt(fig.y.u, best.p[1] * fig.y.sc);
		tip.style.left = (ev.clientX + 14) + 'px';
		tip.style.top = (ev.clientY + 10) + 'px';
		tip.style.display = 'block';
	}

	document.querySelectorAll('svg.chart').forEach(function (svg) {
		var fig = data.figs[svg.getAttribute('data-fig')];

		if (!fig || fig.t !== 'xy')
			return;
		svg.addEventListener('mousemove', function (ev) { hover(svg, fig, ev); });
		svg.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
	});

	document.querySelectorAll('ul.legend').forEach(function (ul) {
		var fig = document.getElementById(ul.getAttribute('data-fig'));

		ul.querySelectorAll('li').forEach(function (li) {
			li.addEventListener('click', function () {
				var s = li.getAttribute('data-s');

				li.classList.toggle('off');
				if (!fig)
					return;
				fig.querySelectorAll('g.s[data-s="' + s + '"], rect.p' + s).forEach(function (g) {
					g.classList.toggle('off');
				});
			});
		});
	});

	function cellKey(td, numeric) {
		if (!td)
			return numeric ? Infinity : '';
		if (numeric) {
			var v = td.hasAttribute('data-v') ? td.getAttribute('data-v') : td.textContent;
			var x = parseFloat(v);

			return isNaN(x) ? Infinity : x;
		}
		return td.textContent;
	}

	document.querySelectorAll('table.sortable').forEach(function (table) {
		var heads = table.querySelectorAll('thead th');

		heads.forEach(function (th, col) {
			th.addEventListener('click', function () {
				var numeric = th.getAttribute('data-k') === 'n';
				var asc = !th.classList.contains('asc');
				var body = table.tBodies[0];
				var rows = Array.prototype.slice.call(body.rows);

				heads.forEach(function (h) { h.classList.remove('asc', 'desc'); });
				th.classList.add(asc ? 'asc' : 'desc');
				rows.sort(function (a, b) {
					var x = cellKey(a.cells[col], numeric), y = cellKey(b.cells[col], numeric);
					var r = numeric ? (x === y ? 0 : x < y ? -1 : 1) : String(x).localeCompare(String(y));

					return asc ? r : -r;
				});
				rows.forEach(function (r) { body.appendChild(r); });
			});
		});
	});

	function frameName(g) {
		var t = g.querySelector('title');
		var m = t ? /^([\s\S]*): \d+ samples, /.exec(t.textContent) : null;

		return m ? m[1] : '';
	}

	// a frame's place as drawn: x, width (of the rect) and depth (its d<N> class)
	function place(g) {
		var r = g.querySelector('rect');

		if (!g.hasAttribute('data-x')) {
			g.setAttribute('data-x', r.getAttribute('x'));
			g.setAttribute('data-w', r.getAttribute('width'));
			g.setAttribute('data-d', /(?:^| )d(\d+)/.exec(g.getAttribute('class'))[1]);
		}
		return { x: parseFloat(g.getAttribute('data-x')), w: parseFloat(g.getAttribute('data-w')),
			 d: parseInt(g.getAttribute('data-d'), 10) };
	}

	function zoom(svg, x0, w0, d0) {
		var W = parseFloat(svg.getAttribute('data-w'));

		svg.querySelectorAll('g.fr').forEach(function (g) {
			var p = place(g), x = p.x, w = p.w, d = p.d, nx, nw;
			var inside = x >= x0 - 1e-6 && x + w <= x0 + w0 + 1e-6;
			var above = x <= x0 + 1e-6 && x + w >= x0 + w0 - 1e-6;

			if (d < d0 && above) {
				nx = 0;
				nw = W;
			} else if (d >= d0 && inside) {
				nx = (x - x0) * W / w0;
				nw = w * W / w0;
			} else {
				g.style.display = 'none';
				return;
			}
			g.style.display = '';
			var r = g.querySelector('rect'), t = g.querySelector('text'), name = frameName(g);
			var chars = Math.floor(nw / 7);

			r.setAttribute('x', nx.toFixed(1));
			r.setAttribute('width', nw.toFixed(1));
			if (!t && chars >= 3) {
				t = document.createElementNS('http://www.w3.org/2000/svg', 'text');
				t.setAttribute('y', (parseFloat(r.getAttribute('y')) + 12).toFixed(0));
				g.appendChild(t);
			}
			if (t) {
				t.setAttribute('x', (nx + 3).toFixed(1));
				t.textContent = chars < 3 ? '' : name.length > chars ? name.slice(0, chars - 2) + '..' : name;
			}
		});
	}

	document.querySelectorAll('svg.flame').forEach(function (svg) {
		svg.addEventListener('click', function (ev) {
			var g = ev.target.closest ? ev.target.closest('g.fr') : null;

			if (!g)
				return;
			var p = place(g);

			zoom(svg, p.x, p.w, p.d);
		});
	});
}());
