/// The console's stylesheet and script, shipped inside the binary (no CDN, no inline script:
/// the Content-Security-Policy allows scripts and styles from the console's own origin only).
enum ConsoleAssets {
    /// `/static/console.css`.
    static let stylesheet = """
        :root { --fg: #1d2430; --muted: #5b6575; --line: #d9dee7; --accent: #1f5fbf; --bad: #b3261e; --ok: #1e7b3a; --warn: #a15c00; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: #f6f7f9; }
        header { display: flex; align-items: center; gap: 24px; padding: 10px 24px; background: #14213d; color: #fff; }
        header h1 { font-size: 16px; margin: 0; }
        header nav a { color: #cfd8ea; text-decoration: none; margin-right: 16px; }
        header nav a.current { color: #fff; border-bottom: 2px solid #fff; }
        header .who { margin-left: auto; color: #cfd8ea; }
        header form { display: inline; }
        main { padding: 20px 24px; max-width: 1300px; }
        h2 { font-size: 18px; margin: 8px 0 16px; }
        h3 { font-size: 15px; margin: 20px 0 8px; }
        .cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(190px, 1fr)); gap: 12px; }
        .card { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; }
        .card .label { color: var(--muted); font-size: 12px; }
        .card .value { font-size: 22px; font-weight: 600; }
        .charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(320px, 1fr)); gap: 12px; margin-top: 16px; }
        svg.chart { width: 100%; height: 70px; background: #fff; border: 1px solid var(--line); border-radius: 6px; }
        svg.chart polyline { fill: none; stroke: var(--accent); stroke-width: 1.5; }
        table { border-collapse: collapse; background: #fff; width: 100%; margin-bottom: 12px; }
        th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
        th { background: #eef1f5; font-weight: 600; font-size: 12px; }
        td.empty { color: var(--muted); }
        form.filters { display: flex; flex-wrap: wrap; gap: 8px; align-items: end; margin-bottom: 12px; }
        form.filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); }
        input, select, button { font: inherit; padding: 4px 6px; }
        button { background: var(--accent); color: #fff; border: 0; border-radius: 4px; padding: 6px 12px; cursor: pointer; }
        button:disabled { background: #9aa7bd; cursor: not-allowed; }
        header button { background: transparent; border: 1px solid #cfd8ea; padding: 2px 8px; }
        .columns { display: grid; grid-template-columns: 3fr 1fr; gap: 16px; }
        .note { color: var(--muted); }
        .bad { color: var(--bad); }
        .ok { color: var(--ok); }
        pre { background: #fff; border: 1px solid var(--line); padding: 8px; white-space: pre-wrap; word-break: break-all; }
        .login { max-width: 360px; margin: 80px auto; background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 24px; }
        .login input { width: 100%; margin: 8px 0 16px; }
        """

    /// `/static/console.js`: applies Server-Sent Events to the page (text by element id, chart
    /// points) and enables the replay button only when the typed confirmation matches.
    static let script = """
        (function () {
          'use strict';
          var stream = document.body.getAttribute('data-stream');
          if (stream && window.EventSource) {
            var source = new EventSource(stream);
            source.addEventListener('open', function () {
              document.body.setAttribute('data-stream-opens', String(Number(document.body.getAttribute('data-stream-opens') || '0') + 1));
            });
            source.addEventListener('update', function (event) {
              var data = JSON.parse(event.data);
              var text = data.text || {};
              Object.keys(text).forEach(function (id) {
                var element = document.getElementById(id);
                if (element) { element.textContent = text[id]; }
              });
              var points = data.points || {};
              Object.keys(points).forEach(function (id) {
                var element = document.getElementById(id);
                if (element) { element.setAttribute('points', points[id]); }
              });
              document.body.setAttribute('data-updates', String(Number(document.body.getAttribute('data-updates') || '0') + 1));
              if (data.done) { source.close(); }
            });
          }
          var confirmation = document.getElementById('confirm-text');
          var button = document.getElementById('replay-submit');
          if (confirmation && button) {
            var expected = confirmation.getAttribute('data-expected');
            var check = function () { button.disabled = confirmation.value !== expected; };
            confirmation.addEventListener('input', check);
            check();
          }
        })();
        """
}
