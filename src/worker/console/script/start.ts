/**
 * The console script's end: the view the page names is opened once there is a token, and the
 * IIFE closes. A fragment of the one script console-script.ts puts together, not a script of
 * its own: it uses the names the fragments before it declare. A String.raw template: no
 * backtick and no dollar-brace in it.
 */

/** This fragment's text. */
export const START = String.raw`  var VIEWS = { runs: runsView, run: runView, inbox: inboxView, prompts: promptsView, prompt: promptView };
  function start() {
    started = true;
    $('token-gate').hidden = true;
    $('main').hidden = false;
    var open = VIEWS[view];
    // What the token may do first: a view leaves out what the token could not use.
    loadPrincipal().then(function () { if (open) return open(); }).catch(report);
    refreshInboxCount().catch(report);
    every(10000, refreshInboxCount);
    timers.push(setInterval(tickTimes, 15000));
  }
  if (token()) start();
  else showGate('');
})();
`;
