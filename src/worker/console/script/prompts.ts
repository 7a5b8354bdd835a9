/**
 * The console script's prompts: the list, a prompt's source with a form that starts a run
 * of it, an upload whose parse errors show at their line. A fragment of the one script
 * console-script.ts puts together, not a script of its own: it uses the names the fragments
 * before it declare. A String.raw template: no backtick and no dollar-brace in it.
 */

/** This fragment's text. */
export const PROMPTS = String.raw`  // ---- Prompts: the list, a prompt's source and its start form, an upload whose parse errors show at their line.
  function sourceLines(list, source, problems) {
    clear(list);
    var byLine = new Map();
    (problems || []).forEach(function (problem) {
      if (typeof problem.line !== 'number') return;
      byLine.set(problem.line, (byLine.get(problem.line) || []).concat([problem]));
    });
    source.split('\n').forEach(function (line, index) {
      var bad = byLine.get(index + 1);
      var item = h('li', { class: bad ? 'bad' : null, 'data-line': index + 1 }, line);
      (bad || []).forEach(function (problem) {
        item.appendChild(h('span', { class: 'why', text: '↑ ' + (problem.column ? 'column ' + problem.column + ': ' : '') + problem.message }));
      });
      list.appendChild(item);
    });
    list.hidden = false;
  }
  async function promptsView() {
    async function load() {
      var listing = await api('GET', '/prompts');
      var rows = clear($('prompts-body'));
      listing.prompts.forEach(function (p) {
        rows.appendChild(h('tr', { 'data-prompt': p.name }, [
          h('td', { 'data-label': 'Prompt' }, h('a', { class: 'mono', href: '/console/prompts/' + enc(p.name), text: p.name })),
          h('td', { 'data-label': 'Description', class: 'description', text: p.description }),
          h('td', { 'data-label': 'Origin', text: p.origin }),
          h('td', { 'data-label': 'Updated' }, timeEl(p.updated_at)),
        ]));
      });
    }
    $('upload-section').hidden = !can('prompts:write');
    $('upload-file').addEventListener('change', function () {
      var file = this.files && this.files[0];
      if (!file) return;
      file.text().then(function (text) {
        $('upload-source').value = text;
        if (!$('upload-name').value) {
          var named = /^name:[ \t]*([a-z0-9][a-z0-9_-]*)[ \t]*$/m.exec(text);
          $('upload-name').value = named ? named[1] : file.name.replace(/\.md$/, '');
        }
      });
    });
    $('upload-form').addEventListener('submit', function (event) {
      event.preventDefault();
      var name = $('upload-name').value.trim();
      var source = $('upload-source').value;
      var outcome = $('upload-outcome');
      var problems = $('upload-problems');
      api('PUT', '/prompts/' + enc(name), source, 'text/markdown; charset=utf-8').then(function (saved) {
        outcome.hidden = false;
        outcome.className = '';
        clear(outcome);
        add(outcome, ['Uploaded ', h('a', { href: '/console/prompts/' + enc(saved.name), text: saved.name }), '.']);
        problems.hidden = true;
        $('upload-lines').hidden = true;
        return load();
      }, function (error) {
        if (error instanceof AuthError) return;
        outcome.hidden = false;
        outcome.className = 'problem';
        outcome.textContent = error.message;
        var list = error.details && Array.isArray(error.details.errors) ? error.details.errors : [];
        clear(problems);
        list.forEach(function (problem) {
          problems.appendChild(h('li', { text: (typeof problem.line === 'number' ? 'line ' + problem.line + (problem.column ? ', column ' + problem.column : '') + ': ' : '') + problem.message }));
        });
        problems.hidden = list.length === 0;
        if (list.length > 0) sourceLines($('upload-lines'), source, list);
        else $('upload-lines').hidden = true;
      }).catch(report);
    });
    await load();
    body.setAttribute('data-ready', '');
  }
  async function promptView() {
    var name = body.getAttribute('data-prompt');
    var prompt = await api('GET', '/prompts/' + enc(name));
    $('prompt-origin').textContent = prompt.origin === 'bundled' ? 'Bundled with the deployment (prompts/)' : 'Uploaded through the API';
    sourceLines($('prompt-source'), prompt.source, []);
    $('start-form').addEventListener('submit', function (event) {
      event.preventDefault();
      var outcome = $('start-outcome');
      var text = $('start-args').value.trim();
      var args;
      try {
        args = text === '' ? {} : JSON.parse(text);
      } catch (e) {
        outcome.hidden = false;
        outcome.textContent = 'The args are not JSON: ' + e.message;
        return;
      }
      api('POST', '/prompts/' + enc(name) + '/runs', { args: args }).then(function (started) {
        location.assign('/console/runs/' + enc(started.run_id));
      }, function (error) {
        if (error instanceof AuthError) return;
        outcome.hidden = false;
        outcome.textContent = messageOf(error);
      });
    });
    // A form's display is the stylesheet's, which the hidden attribute does not win over: gone, rather.
    if (!can('runs:start:' + name)) $('start-form').remove();
    body.setAttribute('data-ready', '');
  }

`;
