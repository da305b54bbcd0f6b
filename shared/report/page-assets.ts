/** The report page's stylesheet and its chart-drawing script (plain ES5, run after Chart.js loads). */

export const PAGE_STYLE = `
:root{--ink:#0f172a;--muted:#64748b;--line:#e2e8f0;--bg:#f8fafc;--card:#fff;--good:#16a34a;--bad:#dc2626;--warn:#d97706;--info:#0284c7}
*{box-sizing:border-box}
body{margin:0;font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg)}
header{background:linear-gradient(135deg,#0f172a,#1e3a8a);color:#fff;padding:28px 40px}
header h1{margin:0;font-size:26px;font-weight:650;letter-spacing:-.01em}
header .meta{margin:4px 0 18px;color:#cbd5e1}
.tiles{display:grid;grid-template-columns:repeat(auto-fit,minmax(170px,1fr));gap:12px;align-items:start}
.tile{background:rgba(255,255,255,.08);border:1px solid rgba(255,255,255,.15);border-radius:10px;padding:12px 14px}
.tile .value{font-size:20px;font-weight:650}
.tile .label{color:#cbd5e1;font-size:12px}
.tile.good .value{color:#86efac}.tile.bad .value{color:#fca5a5}.tile.warn .value{color:#fcd34d}.tile.info .value{color:#7dd3fc}
main{max-width:1280px;margin:0 auto;padding:8px 40px 40px}
section{margin-top:28px}
h2{font-size:19px;margin:0 0 6px}
h3{font-size:15px;margin:0 0 6px}
.sub{color:var(--muted);font-weight:400;font-size:12px}
.lead{color:var(--muted);margin:0 0 12px}
.card{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:16px 18px;margin:12px 0;box-shadow:0 1px 2px rgba(15,23,42,.04)}
.charts.two{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:16px}
.charts.claims{display:grid;grid-template-columns:minmax(280px,360px) 1fr;gap:16px;align-items:start}
figure.chart{margin:0;background:var(--card);border:1px solid var(--line);border-radius:12px;padding:12px}
figure.chart figcaption{font-weight:600;margin-bottom:6px}
.canvas-box{position:relative;height:280px}
figure.doughnut .canvas-box{height:240px}
table{border-collapse:collapse;width:100%;background:var(--card);border:1px solid var(--line);border-radius:12px;overflow:hidden;margin-top:12px}
th,td{padding:7px 10px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:#f1f5f9;font-weight:600;font-size:12px;color:#334155}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;background:#f1f5f9;padding:1px 4px;border-radius:4px}
.empty{background:var(--card);border:1px dashed #cbd5e1;border-radius:12px;padding:16px;color:var(--muted)}
.pill{display:inline-block;padding:1px 8px;border-radius:999px;font-size:12px;background:#e2e8f0}
.pill.good{background:#dcfce7;color:#166534}.pill.bad{background:#fee2e2;color:#991b1b}.pill.info{background:#e0f2fe;color:#075985}
.cell{display:inline-block;min-width:84px;text-align:center;padding:2px 8px;border-radius:6px;font-weight:600;font-size:12px}
.cell.on{background:#dcfce7;color:#166534}.cell.off{background:#f1f5f9;color:#475569}
.cell.moving{background:#e0f2fe;color:#075985;outline:2px solid #38bdf8}
.cell.dangling{background:#fee2e2;color:#991b1b;outline:2px solid #f87171}
.cell.none{color:#cbd5e1}
.detail{color:var(--muted);font-size:11px;max-width:260px}
.sets{display:grid;grid-template-columns:repeat(auto-fit,minmax(220px,1fr));gap:12px}
.set{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:12px}
.set ul{margin:0;padding-left:18px}
.warn-text{color:var(--warn)}
.notes{color:var(--muted)}
.legend .cell{margin-right:6px}
footer{color:var(--muted);text-align:center;padding:24px;font-size:12px}
`;

export const PAGE_SCRIPT = `
(function () {
  var specs = JSON.parse(document.getElementById('report-charts').textContent);
  var PALETTE = ['#2563eb', '#16a34a', '#f97316', '#9333ea', '#0891b2', '#db2777', '#94a3b8'];
  var UNITS = { cpu: 'cores', memory: 'GiB', count: 'clusters' };
  var drawn = [];
  Chart.defaults.font.family = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
  Chart.defaults.color = '#334155';
  specs.forEach(function (s) {
    try {
      var datasets = s.datasets.map(function (d) {
        var palette = d.color === 'palette';
        return {
          type: d.line || d.marker ? 'line' : undefined,
          showLine: d.marker ? false : undefined,
          pointStyle: d.marker ? 'rectRot' : undefined,
          indexAxis: s.horizontal ? 'y' : 'x',
          label: d.label,
          data: d.data,
          readable: d.readable,
          backgroundColor: palette ? PALETTE.slice(0, d.data.length) : d.color,
          borderColor: palette ? '#ffffff' : d.color,
          borderWidth: d.line ? 2 : palette ? 2 : 0,
          borderDash: d.dashed ? [6, 4] : undefined,
          pointRadius: d.marker ? 6 : 0,
          pointHoverRadius: d.marker ? 8 : undefined,
          order: d.line || d.marker ? 0 : 1,
          borderRadius: d.line || palette ? 0 : 3
        };
      });
      var options = {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        plugins: {
          legend: { position: 'bottom' },
          tooltip: {
            callbacks: {
              label: function (ctx) {
                var r = ctx.dataset.readable;
                return ctx.dataset.label + ': ' + (r ? r[ctx.dataIndex] : ctx.formattedValue);
              }
            }
          }
        }
      };
      if (s.kind === 'bar') {
        // Labels read level (never rotated: that squeezed the plot); counts tick on whole numbers.
        var category = { stacked: !!s.stacked, ticks: { autoSkip: !s.horizontal, maxRotation: 0 } };
        var value = {
          stacked: !!s.stacked,
          beginAtZero: true,
          title: { display: true, text: UNITS[s.unit] },
          ticks: s.unit === 'count' ? { precision: 0, stepSize: 1 } : {}
        };
        options.indexAxis = s.horizontal ? 'y' : 'x';
        options.scales = s.horizontal ? { x: value, y: category } : { x: category, y: value };
      }
      var chart = new Chart(document.getElementById('chart-' + s.id), {
        type: s.kind,
        data: { labels: s.labels, datasets: datasets },
        options: options
      });
      var points = 0;
      chart.getSortedVisibleDatasetMetas().forEach(function (m) { points += m.data.length; });
      var area = chart.chartArea || { top: 0, bottom: 0, left: 0, right: 0 };
      var valueScale = chart.scales[s.horizontal ? 'x' : 'y'];
      drawn.push({
        id: s.id,
        datasets: chart.getSortedVisibleDatasetMetas().length,
        points: points,
        plot: { width: Math.round(area.right - area.left), height: Math.round(area.bottom - area.top) },
        ticks: valueScale ? valueScale.ticks.map(function (t) { return t.value; }) : []
      });
    } catch (err) {
      console.error('chart ' + s.id + ' could not be drawn: ' + (err && err.message));
    }
  });
  window.fleetscopeReport = { expected: specs.length, drawn: drawn };
})();
`;
