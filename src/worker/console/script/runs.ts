/**
 * The console script's runs list: newest first, filtered by prompt and status, paged,
 * refreshed while open. A fragment of the one script console-script.ts puts together, not a
 * script of its own: it uses the names the fragments before it declare. A String.raw
 * template: no backtick and no dollar-brace in it.
 */

/** This fragment's text. */
export const RUNS = String.raw`  // ---- Runs: newest first, filtered by prompt and status, paged, refreshed while open.
  var MAX_PER_PAGE = 1000;
  var API_PAGE = 200;
  async function runsView() {
    var params = new URLSearchParams(location.search);
    var prompt = params.get('prompt') || '';
    var status = params.get('status') || '';
    var cursor = params.get('cursor') || '';
    var perPage = Math.min(MAX_PER_PAGE, Math.max(1, parseInt(params.get('per_page') || '50', 10) || 50));
    var form = $('runs-filter');
    form.querySelector('select[name=status]').addEventListener('change', function () { form.requestSubmit(); });
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      var next = new URLSearchParams();
      var data = new FormData(form);
      ['prompt', 'status'].forEach(function (key) { var value = String(data.get(key) || '').trim(); if (value) next.set(key, value); });
      if (perPage !== 50) next.set('per_page', String(perPage));
      location.assign('/console' + (next.toString() ? '?' + next.toString() : ''));
    });
    api('GET', '/prompts').then(function (list) {
      var names = clear($('prompt-names'));
      list.prompts.forEach(function (p) { names.appendChild(h('option', { value: p.name })); });
    }).catch(report);

    function link(cursorValue) {
      var q = new URLSearchParams();
      if (prompt) q.set('prompt', prompt);
      if (status) q.set('status', status);
      if (perPage !== 50) q.set('per_page', String(perPage));
      if (cursorValue) q.set('cursor', cursorValue);
      return '/console' + (q.toString() ? '?' + q.toString() : '');
    }
    async function load() {
      var began = performance.now();
      var runs = [];
      var next = cursor;
      do {
        var q = new URLSearchParams();
        if (prompt) q.set('prompt', prompt);
        if (status) q.set('status', status);
        q.set('limit', String(Math.min(API_PAGE, perPage - runs.length)));
        if (next) q.set('cursor', next);
        var page = await api('GET', '/runs?' + q.toString());
        runs = runs.concat(page.runs);
        next = page.next_cursor;
      } while (next && runs.length < perPage);
      var rows = document.createDocumentFragment();
      runs.forEach(function (run) {
        rows.appendChild(h('tr', { 'data-run': run.run_id }, [
          h('td', { 'data-label': 'Run' }, h('a', { class: 'mono', href: '/console/runs/' + enc(run.run_id), text: run.run_id })),
          h('td', { 'data-label': 'Prompt' }, h('a', { href: '/console?prompt=' + enc(run.prompt), text: run.prompt })),
          h('td', { 'data-label': 'Status' }, statusEl(run.status)),
          h('td', { 'data-label': 'Started' }, timeEl(run.created_at)),
          h('td', { 'data-label': 'Ended' }, timeEl(run.ended_at)),
          h('td', { 'data-label': 'Asks', text: run.pending_count > 0 ? run.pending_count + ' waiting' : '' }),
        ]));
      });
      var tbody = clear($('runs-body'));
      tbody.appendChild(rows);
      $('runs-summary').textContent = runs.length === 0 ? 'No runs match.' : runs.length + (runs.length === 1 ? ' run' : ' runs') + (prompt ? ' of ' + prompt : '') + (status ? ', ' + status : '') + (cursor ? ', older page' : ', newest first');
      var older = $('runs-older');
      older.hidden = !next;
      if (next) older.setAttribute('href', link(next));
      var newest = $('runs-newest');
      newest.hidden = !cursor;
      newest.setAttribute('href', link(''));
      body.setAttribute('data-rows', String(runs.length));
      body.setAttribute('data-render-ms', String(Math.round(performance.now() - began)));
    }
    await load();
    body.setAttribute('data-ready-ms', String(Math.round(performance.now())));
    body.setAttribute('data-ready', '');
    every(5000, load);
  }

`;
