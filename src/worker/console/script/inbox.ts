/**
 * The console script's inbox: every pending ask across runs, oldest first. A fragment of the
 * one script console-script.ts puts together, not a script of its own: it uses the names the
 * fragments before it declare. A String.raw template: no backtick and no dollar-brace in it.
 */

/** This fragment's text. */
export const INBOX = String.raw`  // ---- Inbox: every pending ask across runs, oldest first.
  async function inboxView() {
    async function load() {
      var asks = [];
      var cursor = null;
      do {
        var page = await api('GET', '/asks?status=pending&limit=200' + (cursor ? '&cursor=' + enc(cursor) : ''));
        asks = asks.concat(page.asks);
        cursor = page.next_cursor;
      } while (cursor && asks.length < 1000);
      $('inbox-summary').textContent = asks.length === 0 ? 'Nothing waits for an answer.' : asks.length + (asks.length === 1 ? ' ask waits' : ' asks wait') + ', oldest first.';
      showAsks($('inbox-list'), asks, { showRun: true, onAnswered: function () { setTimeout(function () { load().catch(report); refreshInboxCount().catch(report); }, 800); } });
    }
    await load();
    body.setAttribute('data-ready', '');
    every(4000, load);
  }

`;
