/**
 * The console's views as the server renders them: the frame of each, with empty places the
 * script fills from the API (lists, a run's events, a prompt's source). What the server puts
 * in them comes from the URL only (a run id, a filter), and JSX escapes it.
 */
import { Layout } from './layout.tsx';

/** The statuses a run can have, for the runs filter. */
const STATUSES = ['running', 'suspended', 'completed', 'failed', 'cancelled'] as const;

/** The runs, newest first, filtered by prompt and status. */
export function RunsPage(props: { prompt: string; status: string }) {
  return (
    <Layout view="runs" title="Runs">
      <h1>Runs</h1>
      <form id="runs-filter" class="filters" method="get" action="/console">
        <label>
          Prompt <input name="prompt" list="prompt-names" value={props.prompt} placeholder="any prompt" autocomplete="off" />
        </label>
        <datalist id="prompt-names"></datalist>
        <label>
          Status{' '}
          <select name="status">
            <option value="">any status</option>
            {STATUSES.map((status) => (
              <option value={status} selected={status === props.status}>
                {status}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Filter</button>
      </form>
      <p id="runs-summary" class="muted" aria-live="polite"></p>
      <table id="runs-table" class="list">
        <thead>
          <tr>
            <th>Run</th>
            <th>Prompt</th>
            <th>Status</th>
            <th>Started</th>
            <th>Ended</th>
            <th>Asks</th>
          </tr>
        </thead>
        <tbody id="runs-body"></tbody>
      </table>
      <nav class="pager">
        <a id="runs-newest" href="/console" hidden>
          ← Newest
        </a>
        <a id="runs-older" href="/console" hidden>
          Older →
        </a>
      </nav>
    </Layout>
  );
}

/** One run: its outcome, its pending asks, its conversation, tool calls, events and files. */
export function RunPage(props: { runId: string }) {
  return (
    <Layout view="run" title={`Run ${props.runId}`} data={{ run: props.runId }}>
      <p class="crumbs">
        <a href="/console">Runs</a> / <span class="mono">{props.runId}</span>
      </p>
      <h1>
        <span id="run-prompt">Run</span> <span id="run-status" class="status"></span>
      </h1>
      <dl class="facts">
        <dt>Run</dt>
        <dd class="mono">{props.runId}</dd>
        <dt>Started</dt>
        <dd id="run-created"></dd>
        <dt>Ended</dt>
        <dd id="run-ended">—</dd>
        <dt>Build</dt>
        <dd id="run-build" class="mono"></dd>
        <dt>Stream</dt>
        <dd id="run-live">connecting…</dd>
      </dl>
      <section id="run-outcome" hidden>
        <h2 id="run-outcome-title">Result</h2>
        <div id="run-outcome-body"></div>
      </section>
      <section id="run-asks" hidden>
        <h2>Waiting for an answer</h2>
        <div id="run-asks-list" class="asks"></div>
        <div id="run-tools-list" class="asks"></div>
      </section>
      <section>
        <h2>Conversation</h2>
        <p class="muted" id="conversation-empty">
          No model step yet.
        </p>
        <div id="conversation" class="steps"></div>
      </section>
      <section>
        <h2>Tool calls</h2>
        <p class="muted" id="tool-calls-empty">
          No tool call yet.
        </p>
        <div id="tool-calls" class="calls"></div>
      </section>
      <section>
        <h2>Timeline</h2>
        <ol id="timeline" class="timeline"></ol>
      </section>
      <section>
        <h2>Files</h2>
        <p class="muted" id="files-empty">
          No files.
        </p>
        <ul id="files" class="files"></ul>
        <div id="file-view" hidden>
          <h3 id="file-name" class="mono"></h3>
          <pre id="file-text" class="output"></pre>
        </div>
      </section>
      <section>
        <button type="button" id="cancel-run" class="danger" hidden>
          Cancel this run
        </button>
      </section>
    </Layout>
  );
}

/** Every pending ask across runs, oldest first. */
export function InboxPage() {
  return (
    <Layout view="inbox" title="Inbox">
      <h1>Inbox</h1>
      <p id="inbox-summary" class="muted" aria-live="polite"></p>
      <div id="inbox-list" class="asks"></div>
    </Layout>
  );
}

/** The deployed prompts, and an upload. */
export function PromptsPage() {
  return (
    <Layout view="prompts" title="Prompts">
      <h1>Prompts</h1>
      <table class="list">
        <thead>
          <tr>
            <th>Prompt</th>
            <th>Description</th>
            <th>Origin</th>
            <th>Updated</th>
          </tr>
        </thead>
        <tbody id="prompts-body"></tbody>
      </table>
      <section id="upload-section">
        <h2>Upload a prompt</h2>
        <form id="upload-form" class="upload">
          <label>
            Name <input name="name" id="upload-name" pattern="[a-z0-9][a-z0-9_\-]{0,99}" placeholder="the frontmatter's name" required />
          </label>
          <label>
            File <input type="file" id="upload-file" accept=".md,text/markdown,text/plain" />
          </label>
          <label class="wide">
            Markdown <textarea name="source" id="upload-source" rows={14} spellcheck={false} required></textarea>
          </label>
          <button type="submit">Upload</button>
        </form>
        <p id="upload-outcome" aria-live="polite" hidden></p>
        <ol id="upload-problems" class="problems" hidden></ol>
        <ol id="upload-lines" class="source" hidden></ol>
      </section>
    </Layout>
  );
}

/** One prompt: a form that starts a run of it, and its source. */
export function PromptPage(props: { name: string }) {
  return (
    <Layout view="prompt" title={`Prompt ${props.name}`} data={{ prompt: props.name }}>
      <p class="crumbs">
        <a href="/console/prompts">Prompts</a> / <span class="mono">{props.name}</span>
      </p>
      <h1 class="mono">{props.name}</h1>
      <p id="prompt-origin" class="muted"></p>
      <p>
        <a id="prompt-runs" href={`/console?prompt=${encodeURIComponent(props.name)}`}>
          Its runs
        </a>
      </p>
      <form id="start-form" class="upload">
        <label class="wide">
          Args (JSON, optional: the prompt's defaults fill the rest){' '}
          <textarea name="args" id="start-args" rows={2} spellcheck={false} placeholder="{}"></textarea>
        </label>
        <button type="submit">Start a run</button>
      </form>
      <p id="start-outcome" class="problem" aria-live="polite" hidden></p>
      <ol id="prompt-source" class="source"></ol>
    </Layout>
  );
}
