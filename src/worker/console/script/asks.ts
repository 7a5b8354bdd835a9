/**
 * The console script's asks: a question with its choices as buttons, its form as an HTML
 * form (ask-form.ts), or a text answer. A
 * fragment of the one script console-script.ts puts together, not a script of its own: it
 * uses the names the fragments before it declare. A String.raw template: no backtick and no
 * dollar-brace in it.
 */

/** This fragment's text. */
export const ASKS = String.raw`  // ---- Asks: the question, choices as buttons, a form's fields, a text answer otherwise.
  function askCard(ask, options) {
    var card = h('article', { class: 'ask', 'data-ask': ask.ask_id, 'data-run': ask.run_id });
    var meta = h('p', { class: 'meta' });
    if (options.showRun) add(meta, [h('a', { href: '/console/runs/' + enc(ask.run_id), text: ask.prompt + ' · ' + ask.run_id }), ' · ']);
    add(meta, ['asked ', timeEl(ask.asked_at)]);
    if (ask.expires_at) add(meta, [' · closes ', timeEl(ask.expires_at)]);
    if (ask.task && ask.task !== '0') add(meta, [' · task ' + ask.task]);
    card.appendChild(meta);
    card.appendChild(h('p', { class: 'question', text: ask.question === null || ask.question === undefined ? '(no question: the run waits for your next message)' : ask.question }));
    if (!can('asks:answer:' + ask.prompt)) {
      card.appendChild(h('p', { class: 'muted read-only', text: 'This key may not answer asks of ' + ask.prompt + ' (it needs asks:answer:' + ask.prompt + ').' }));
      return card;
    }
    var problem = h('p', { class: 'problem', role: 'alert', hidden: true });
    var form = h('form', { class: 'answer', novalidate: true });
    function send(answer) {
      var buttons = form.querySelectorAll('button, textarea, input, select');
      for (var i = 0; i < buttons.length; i++) buttons[i].disabled = true;
      problem.hidden = true;
      api('POST', '/runs/' + enc(ask.run_id) + '/asks/' + enc(ask.ask_id), { answer: answer }).then(function () {
        clear(form).appendChild(h('p', { class: 'muted', text: 'Answered: ' + (typeof answer === 'string' ? answer : JSON.stringify(answer)) }));
        card.setAttribute('data-answered', '');
        if (options.onAnswered) options.onAnswered(ask);
      }, function (error) {
        for (var i = 0; i < buttons.length; i++) buttons[i].disabled = false;
        if (error instanceof AuthError) return;
        problem.hidden = false;
        problem.textContent = messageOf(error);
      });
    }
    if (ask.form && typeof ask.form === 'object') {
      form.classList.add('form-ask');
      var filled = formInputs(form, ask.form);
      form.appendChild(h('button', { type: 'submit', text: 'Answer' }));
      form.addEventListener('submit', function (event) {
        event.preventDefault();
        send(filled());
      });
    } else if (Array.isArray(ask.choices) && ask.choices.length > 0) {
      ask.choices.forEach(function (choice) {
        form.appendChild(h('button', { type: 'button', class: 'choice', text: choice, on: { click: function () { send(choice); } } }));
      });
      form.addEventListener('submit', function (event) { event.preventDefault(); });
    } else {
      var input = h('textarea', { name: 'answer', rows: 2, 'aria-label': 'Answer', placeholder: 'Your answer' });
      form.appendChild(input);
      form.appendChild(h('button', { type: 'submit', text: 'Answer' }));
      form.addEventListener('submit', function (event) {
        event.preventDefault();
        send(input.value);
      });
      input.addEventListener('keydown', function (event) {
        if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) { event.preventDefault(); send(input.value); }
      });
    }
    card.appendChild(form);
    card.appendChild(problem);
    return card;
  }
  /** Replaces the cards of a list only when its asks changed, so a half-typed answer stays. */
  function showAsks(list, asks, options) {
    var ids = asks.map(function (ask) { return ask.run_id + '/' + ask.ask_id; }).join('\n');
    if (list.getAttribute('data-asks') === ids) return;
    list.setAttribute('data-asks', ids);
    clear(list);
    asks.forEach(function (ask) { list.appendChild(askCard(ask, options)); });
  }

  async function refreshInboxCount() {
    var badge = $('inbox-count');
    try {
      var page = await api('GET', '/asks?status=pending&limit=200');
      var count = page.asks.length;
      badge.hidden = count === 0;
      badge.textContent = count + (page.next_cursor ? '+' : '');
    } catch (error) {
      badge.hidden = true;
      if (error instanceof AuthError) throw error;
    }
  }

`;
