/**
 * The console script's run page: outcome, asks, conversation, tool calls, timeline and
 * files, followed live. A fragment of the one script console-script.ts puts together, not a
 * script of its own: it uses the names the fragments before it declare. A String.raw
 * template: no backtick and no dollar-brace in it.
 */

/** This fragment's text. */
export const RUN = String.raw`  // ---- A run: outcome, asks, conversation, tool calls, timeline, files; live.
  async function runView() {
    var id = body.getAttribute('data-run');
    var current = null;
    var lastSeq = 0;
    var stepCount = 0;
    var conversations = new Map();
    var systems = new Map();
    var openSteps = new Map();
    var calls = new Map();
    var scriptCalls = new Map();
    var refreshing = null;

    function show(runView) {
      current = runView;
      $('run-prompt').textContent = runView.prompt;
      var badge = $('run-status');
      badge.textContent = runView.status;
      badge.setAttribute('data-status', runView.status);
      document.title = runView.status + ' · ' + runView.prompt + ' · Runvil';
      clear($('run-created')).appendChild(timeEl(runView.created_at));
      clear($('run-ended')).appendChild(timeEl(runView.ended_at));
      showBuild(runView.build);
      var outcome = $('run-outcome');
      var outcomeBody = clear($('run-outcome-body'));
      outcome.hidden = !FINAL[runView.status];
      if (runView.error) {
        $('run-outcome-title').textContent = runView.status === 'cancelled' ? 'Cancelled' : 'Error';
        add(outcomeBody, [h('p', {}, [h('strong', { class: 'mono', text: runView.error.kind }), ' ', h('span', { id: 'run-error-message', text: runView.error.message })])]);
      } else if (runView.status === 'completed') {
        $('run-outcome-title').textContent = 'Result';
        add(outcomeBody, runView.result === null ? h('p', { class: 'muted', text: '(no result)' }) : h('div', { id: 'run-result' }, textBlock(runView.result)));
      }
      var asks = (runView.pending || []).filter(function (item) { return item.kind === undefined || item.kind === 'ask'; });
      var tools = (runView.pending || []).filter(function (item) { return item.kind === 'tool'; });
      $('run-asks').hidden = asks.length === 0 && tools.length === 0;
      showAsks($('run-asks-list'), asks, { showRun: false, onAnswered: scheduleRefresh });
      // Tool calls whose service answers later (202): nothing to answer here, only to see.
      var waiting = clear($('run-tools-list'));
      tools.forEach(function (call) {
        waiting.appendChild(h('p', { class: 'ask meta', 'data-call': call.call_id }, [
          h('strong', { class: 'mono', text: call.tool }), ' waits for its service, called ', timeEl(call.called_at), ', deadline ', timeEl(call.deadline),
        ]));
      });
      $('cancel-run').hidden = !!FINAL[runView.status] || !can('runs:start:' + runView.prompt);
      body.setAttribute('data-status', runView.status);
    }
    // The build the run started on: its id and the first digits of each digest, each in full on hover.
    function showBuild(build) {
      var where = $('run-build');
      if (!build) {
        where.textContent = 'not recorded (the run started before builds were kept)';
        return;
      }
      var short = function (digest) { return digest.slice(0, 'sha256:'.length + 8); };
      where.textContent = build.id + ' (engine ' + build.engine + ', lua ' + short(build.lua) + ', config ' + short(build.config) + ', prompt ' + short(build.prompt) + ')';
      var packs = Object.keys(build.packs || {}).map(function (pack) { return pack + ' ' + build.packs[pack]; });
      where.title = ['lua ' + build.lua, 'config ' + build.config, 'prompt ' + build.prompt].concat(packs).join('\n');
    }
    async function refresh() {
      show(await api('GET', '/runs/' + enc(id)));
      await loadFiles();
    }
    function scheduleRefresh() {
      if (refreshing) return;
      refreshing = setTimeout(function () {
        refreshing = null;
        refresh().catch(report);
      }, 100);
    }

    async function loadFiles() {
      var listing = await api('GET', '/runs/' + enc(id) + '/files/');
      var list = clear($('files'));
      $('files-empty').hidden = listing.files.length > 0;
      listing.files.forEach(function (path) {
        var open = h('a', { href: '#', class: 'mono', text: path });
        open.addEventListener('click', function (event) {
          event.preventDefault();
          var where = '/runs/' + enc(id) + '/files/' + path.split('/').map(enc).join('/');
          api('GET', where).then(function (text) {
            $('file-view').hidden = false;
            $('file-name').textContent = path;
            $('file-text').textContent = typeof text === 'string' ? text : JSON.stringify(text, null, 2);
          }).catch(report);
        });
        list.appendChild(h('li', {}, open));
      });
    }

    // The timeline: every event, with where it happened and its fields.
    var KIND = { ask_pending: 'ask', ask_answered: 'ask', run_completed: 'end', run_failed: 'fail', task_failed: 'fail', tool_call_failed: 'fail' };
    function summary(event) {
      switch (event.type) {
        case 'run_started': return 'args ' + JSON.stringify(event.args) + (event.untrusted_args ? ' (untrusted: ' + event.untrusted_args.join(', ') + ')' : '');
        case 'section_entered': return event.entry ? 'by ' + event.entry : '';
        case 'ask_pending': return event.question === null ? '(no question)' : String(event.question);
        case 'ask_answered': return event.answered_by ? 'by ' + event.answered_by : '';
        case 'model_turn_started': return event.role + ': ' + (event.messages || []).length + ' new message(s)';
        case 'model_turn_completed': return event.tool_calls > 0 ? event.tool_calls + ' tool call(s)' : String(event.content || '').slice(0, 160);
        case 'assistant_tool_calls': return (event.calls || []).map(function (call) { return call.name; }).join(', ');
        case 'tool_call_started': case 'tool_call_succeeded': return String(event.tool || event.alias);
        case 'tool_call_failed': return String(event.tool || event.alias) + ': ' + event.error;
        case 'tool_result': return String(event.alias) + (event.trusted ? '' : ' (untrusted)');
        case 'log': return String(event.message);
        case 'ui_message': case 'ui_status': return String(event.text);
        case 'run_completed': return String(event.result === null ? '' : event.result).slice(0, 160);
        case 'run_failed': case 'task_failed': return event.error ? event.error.kind + ': ' + event.error.message : '';
        case 'task_cancelled': return String(event.message || '');
        default: return '';
      }
    }
    function timelineItem(event) {
      var where = [];
      if (event.section) where.push(event.section);
      if (event.task !== undefined && event.task !== '0') where.push('task ' + event.task);
      if (event.turn) where.push('turn ' + event.turn);
      var text = summary(event);
      return h('li', { 'data-kind': KIND[event.type] || null, 'data-type': event.type }, [
        h('span', { class: 'seq', text: '#' + event.seq }),
        h('span', { class: 'type', text: event.type }),
        where.length ? h('span', { class: 'where', text: where.join(' · ') }) : null,
        event.at ? [' ', timeEl(event.at)] : null,
        text ? h('span', { class: 'summary', text: text.length > 240 ? text.slice(0, 240) + '…' : text }) : null,
        h('details', { class: 'fields' }, [h('summary', { text: 'fields' }), jsonBlock(event)]),
      ]);
    }

    // Each model step: the conversation as the model saw it, then its reply.
    function messageEl(message, extraClass) {
      var role = String(message.role);
      var node = h('div', { class: 'message' + (extraClass ? ' ' + extraClass : ''), 'data-role': role }, [
        h('div', { class: 'who', text: role + (message.tool_call_id ? ' · ' + message.tool_call_id : '') }),
      ]);
      if (message.content !== undefined && message.content !== null && message.content !== '') node.appendChild(contentBlock(message.content));
      if (Array.isArray(message.tool_calls)) {
        message.tool_calls.forEach(function (call) {
          add(node, [h('div', { class: 'mono', text: 'calls ' + call.name + ' (' + call.id + ')' }), jsonBlock(call.arguments)]);
        });
      }
      return node;
    }
    function modelStep(event) {
      var key = event.task;
      var earlier = event.once ? [] : (conversations.get(key) || []).slice(0, Math.max(0, event.from - 1));
      var added = event.messages || [];
      var system = event.system;
      if (!event.once) {
        conversations.set(key, earlier.concat(added));
        if (event.from === 1) systems.set(key, system === undefined ? null : system);
        else system = systems.get(key);
      }
      stepCount++;
      var step = h('article', { class: 'step', 'data-step': stepCount }, [
        h('header', {}, [
          h('strong', { text: 'Step ' + stepCount }),
          h('span', { text: 'role ' + event.role }),
          event.section ? h('span', { text: 'section ' + event.section }) : null,
          event.task !== '0' ? h('span', { text: 'task ' + event.task }) : null,
          h('span', { text: event.once ? 'one-off round' : 'turn ' + event.turn }),
          event.at ? timeEl(event.at) : null,
        ]),
      ]);
      if (system !== undefined && system !== null) step.appendChild(messageEl({ role: 'system', content: system }));
      if (earlier.length > 0) {
        var fold = h('details', { class: 'fold' }, h('summary', { text: earlier.length + ' earlier message(s) of this conversation' }));
        earlier.forEach(function (message) { fold.appendChild(messageEl(message)); });
        step.appendChild(fold);
      }
      added.forEach(function (message) { step.appendChild(messageEl(message)); });
      var reply = h('div', { class: 'message reply', 'data-role': 'assistant' }, [h('div', { class: 'who', text: 'reply' }), h('p', { class: 'muted', text: 'waiting for the model…' })]);
      step.appendChild(reply);
      openSteps.set(key, { reply: reply, at: event.at, step: event.seq, text: null, live: null });
      $('conversation-empty').hidden = true;
      $('conversation').appendChild(step);
    }
    // A step's text as the model produces it (model_delta): shown in its reply until the reply
    // itself (model_turn_completed) replaces it. A restart (a retry, a reconnect's catch-up)
    // replaces the text so far.
    function modelDelta(event) {
      var open = openSteps.get(event.task);
      if (!open || open.step !== event.step) return;
      if (open.live === null) {
        open.live = h('p', { class: 'streaming' });
        open.text = '';
        add(clear(open.reply), [h('div', { class: 'who', text: 'reply · arriving…' }), open.live]);
      }
      open.text = event.restart ? event.text : open.text + event.text;
      open.live.textContent = open.text;
    }
    function modelReply(event) {
      var open = openSteps.get(event.task);
      if (!open) return;
      openSteps.delete(event.task);
      var took = open.at && event.at ? duration(open.at, event.at) : null;
      clear(open.reply).appendChild(h('div', { class: 'who', text: 'reply' + (took ? ' · ' + took : '') + (event.usage && event.usage.output_tokens !== undefined ? ' · ' + event.usage.input_tokens + ' in, ' + event.usage.output_tokens + ' out' : '') }));
      if (event.content) open.reply.appendChild(contentBlock(event.content));
      if (event.tool_calls > 0) open.reply.appendChild(h('p', { class: 'muted', text: event.tool_calls + ' tool call(s): see Tool calls' }));
      if (!event.content && !(event.tool_calls > 0)) open.reply.appendChild(h('p', { class: 'muted', text: '(empty reply)' }));
    }

    // Each tool call: arguments, output or failure, duration.
    function callCard(key, event, name, tool, args, caller) {
      var status = h('span', { class: 'outcome', text: 'running…' });
      var card = h('article', { class: 'call', 'data-call': key, 'data-outcome': 'running' }, [
        h('header', {}, [h('strong', { class: 'mono', text: name }), tool && tool !== name ? h('span', { class: 'mono', text: tool }) : null, h('span', { text: caller }), event.section ? h('span', { text: 'section ' + event.section }) : null, event.at ? timeEl(event.at) : null, status]),
      ]);
      if (args !== undefined) add(card, [h('div', { class: 'muted', text: 'arguments' }), jsonBlock(args)]);
      var entry = { card: card, status: status, at: event.at, tool: tool, name: name };
      calls.set(key, entry);
      $('tool-calls-empty').hidden = true;
      $('tool-calls').appendChild(card);
      return entry;
    }
    function findCall(event, create) {
      if (event.tool_call_id) {
        var key = 'm:' + event.task + ':' + event.tool_call_id;
        return calls.get(key) || (create ? callCard(key, event, event.alias, event.tool, undefined, 'model') : null);
      }
      var queue = scriptCalls.get(event.task) || [];
      for (var i = 0; i < queue.length; i++) {
        if (queue[i].name === event.alias) {
          var found = queue[i];
          if (create) queue.splice(i, 1);
          return found;
        }
      }
      return create ? callCard('s:' + event.seq, event, event.alias, event.tool, undefined, 'script') : null;
    }
    var lastClosed = new Map();
    function callEvent(event) {
      if (event.type === 'assistant_tool_calls') {
        (event.calls || []).forEach(function (call) { callCard('m:' + event.task + ':' + call.id, event, call.name, call.tool, call.arguments, 'called by the model'); });
      } else if (event.type === 'tool_call_started') {
        var entry = callCard('s:' + event.seq, event, event.alias, event.tool, event.arguments, 'called by the script');
        var queue = scriptCalls.get(event.task) || [];
        queue.push(entry);
        scriptCalls.set(event.task, queue);
      } else if (event.type === 'tool_call_succeeded' || event.type === 'tool_call_failed') {
        var call = findCall(event, true);
        var took = call.at && event.at ? duration(call.at, event.at) : null;
        var failed = event.type === 'tool_call_failed';
        call.card.setAttribute('data-outcome', failed ? 'failed' : 'succeeded');
        call.status.textContent = (failed ? 'failed' : 'succeeded') + (took ? ' in ' + took : '');
        if (failed) add(call.card, [h('div', { class: 'muted', text: 'failure' }), h('pre', { class: 'output failure', text: String(event.error) })]);
        lastClosed.set(event.task + '/' + (event.tool_call_id || event.alias), call);
      } else if (event.type === 'tool_result') {
        var closed = lastClosed.get(event.task + '/' + (event.tool_call_id || event.alias));
        if (!closed) return;
        add(closed.card, [h('div', { class: 'muted', text: 'output' + (event.trusted ? '' : ' (untrusted)') }), contentBlock(event.content)]);
      }
    }

    var REFRESH_ON = { ask_pending: 1, ask_answered: 1, run_suspended: 1, run_resumed: 1, run_completed: 1, run_failed: 1, task_cancelled: 1 };
    function onEvent(event) {
      if (event.type === 'model_delta') return modelDelta(event);
      if (typeof event.seq !== 'number' || event.seq <= lastSeq) return;
      lastSeq = event.seq;
      $('timeline').appendChild(timelineItem(event));
      if (event.type === 'model_turn_started') modelStep(event);
      else if (event.type === 'model_turn_completed') modelReply(event);
      else callEvent(event);
      if (REFRESH_ON[event.type]) scheduleRefresh();
      body.setAttribute('data-last-seq', String(lastSeq));
    }
    function onBlock(block) {
      var data = [];
      block.split('\n').forEach(function (line) {
        if (line.indexOf('data:') === 0) data.push(line.slice(line.charAt(5) === ' ' ? 6 : 5));
      });
      if (data.length === 0) return;
      try { onEvent(JSON.parse(data.join('\n'))); } catch (error) { report(error); }
    }
    function live(text) { $('run-live').textContent = text; }

    // EventSource cannot send the bearer header: the stream is read through fetch.
    async function follow() {
      var wait = 1000;
      for (;;) {
        var controller = new AbortController();
        aborts.push(controller);
        try {
          var response = await fetch('/runs/' + enc(id) + '/events', { cache: 'no-store', signal: controller.signal, headers: headers({ accept: 'text/event-stream', 'last-event-id': String(lastSeq) }) });
          if (response.status === 204) { live('ended'); return; }
          if (!response.ok) await readResponse(response);
          live('live');
          wait = 1000;
          var reader = response.body.getReader();
          var decoder = new TextDecoder();
          var buffer = '';
          for (;;) {
            var chunk = await reader.read();
            if (chunk.done) break;
            buffer += decoder.decode(chunk.value, { stream: true }).replace(/\r\n?/g, '\n');
            var at;
            while ((at = buffer.indexOf('\n\n')) >= 0) {
              onBlock(buffer.slice(0, at));
              buffer = buffer.slice(at + 2);
            }
          }
        } catch (error) {
          if (error instanceof AuthError || controller.signal.aborted) return;
          if (error instanceof ApiError && error.status === 404) { live('no event stream for this run'); return; }
        }
        await refresh().catch(report);
        if (current && FINAL[current.status]) { live('ended'); return; }
        live('reconnecting…');
        await sleep(wait);
        wait = Math.min(wait * 2, 15000);
      }
    }

    $('cancel-run').addEventListener('click', function () {
      if (!confirm('Cancel this run? It ends as cancelled and cannot be resumed.')) return;
      api('POST', '/runs/' + enc(id) + '/cancel', { reason: 'cancelled in the console' }).then(show, report);
    });

    await refresh();
    body.setAttribute('data-ready', '');
    follow().catch(report);
  }

`;
