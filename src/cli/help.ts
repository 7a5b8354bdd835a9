/**
 * The command line's help texts: `runvil --help`, `runvil help COMMAND`, `runvil COMMAND --help`.
 */

const OVERVIEW = `runvil: run prompt programs (Markdown prompts with Lua, tools and models)

Usage:
  runvil run PROMPT.md [options]     run a prompt and print its result
  runvil check FILE...               check prompts (compile their Lua) and runvil.yaml files
  runvil test [PATHS...]             run every *.test.yaml under the paths (default .)
  runvil keys create|list|revoke     manage a deployment's keys (--url URL)
  runvil packs accept VENDOR/NAME    accept an MCP Pack's changed tools (here, or --url URL)
  runvil deploy-check --url URL      replay a deployment's suspended runs on this build
                                     before deploying it; exit 1 if any would break
  runvil help [COMMAND]              show this help, or a command's

Exit status: 0 ok; 1 a run, check or test failed; 2 a usage error (unknown command or
option, missing file, bad --arg, a test file that does not fit the format).
`;

const RUN = `Usage: runvil run PROMPT.md [options]
       runvil run --from FILE.test.yaml [--until N] [PROMPT.md] [options]

Runs the prompt and prints its result on standard output (exit 0); a failed run prints
error[Kind]: message on standard error (exit 1).

With --from, forks the run a test file records (GET /runs/:id/test.yaml): its first N journal
entries replay from the file (its model replies, answers and recorded tool outputs), then the
run goes on live, on the local Host or --script. PROMPT.md, when given, is an edited prompt,
which must reproduce those N entries (the first step that differs is named otherwise).

Options:
  --arg KEY=VALUE         a run argument, typed by the prompt's args: declaration (repeatable)
  --script FILE           run on the fixture Host with a scripted model: FILE holds the
                          host, model, answers and seed keys of a test file
  --model PROVIDER:MODEL  the provider and model of every role (openai, anthropic), such as
                          openai:gpt-4o-mini; without it each role's models: config decides,
                          and {} is RUNVIL_DEFAULT_MODEL or the provider whose key is set
  --seed S                the run seed (default: random; "0" or the script's seed with --script)
  --answer TEXT           an operator answer, used in order before asking the terminal (repeatable)
  --from FILE.test.yaml   fork the run the test file records (its prompt, args and seed)
  --until N               with --from: how many journal entries replay before the run goes
                          live (default: all; the test file's comments number them)
  --json                  print one JSON object {status, result, error, events} instead
  --events                stream each event to standard error as a JSON line as it happens
                          (a model step's text as model_delta events)
  --quiet                 print only the result; without it, each model step's text goes
                          to standard error as the model produces it
  --max-instructions N    the run's Lua instruction budget
  --entry-timeout SECONDS how long one section entry may compute, in wall-clock seconds
                          (default 60; waits on tools, models and the operator do not
                          count; 0 for no limit); past it the run ends with Limit
  --config FILE           the deployment's configuration (its MCP Packs); default
                          ./runvil.yaml when present
  --verbose               print the Lua traceback of a failed run
  -h, --help              show this help

Environment: OPENAI_API_KEY, OPENAI_BASE_URL (an OpenAI-compatible server), ANTHROPIC_API_KEY,
ANTHROPIC_BASE_URL, RUNVIL_DEFAULT_MODEL (provider:model); BRAVE_SEARCH_API_KEY or
TAVILY_API_KEY for web/search; RUNVIL_CALLBACK_PORT, the loopback port (127.0.0.1) where the
run takes the results of HTTP tool services that answer later (default: a free one).
`;

const CHECK = `Usage: runvil check FILE... [--config runvil.yaml]

Parses every prompt file and compiles its Lua blocks and {{ }} expressions; checks every
.yaml file (other than a .test.yaml) as a deployment configuration (runvil.yaml). Prints
each error as file:line:column: error[Kind]: message and "ok: FILE" for each good file.
Exit 1 on any error.

Options:
  --config FILE           also check each prompt's uses: against this deployment's Packs
                          (runvil's own and the file's packs:): a Pack it does not have is
                          an error at its line
`;

const TEST = `Usage: runvil test [PATHS...] [--entry-timeout SECONDS]

Runs every *.test.yaml file under the paths (default: the current directory; node_modules
and hidden directories are skipped), one line per test (ok or FAIL), then N passed, N failed.
Exit 1 when any test failed, 2 when a test file does not fit the format.

Options:
  --entry-timeout SECONDS how long one section entry of a test's run may compute (default
                          60; 0 for no limit); past it the run ends with Limit
`;

const KEYS = `Usage: runvil keys create NAME --scope SCOPE [--scope SCOPE...] --url URL [options]
       runvil keys list --url URL [options]
       runvil keys revoke ID --url URL [options]

Manages the keys of the deployment at URL with its root key (RUNVIL_API_TOKEN). A key
holds scopes: runs:read (runs, events, files, asks, prompts, the console), runs:start:PROMPT
or runs:start:* (start, cancel and fork runs), asks:answer:PROMPT or asks:answer:* (answer
asks), prompts:write (upload prompts), admin (all but managing keys).

create prints the new key alone on standard output: it is shown this once. list prints
each key (never its text) with its scopes and when it was made, last used and revoked.
revoke refuses the key from then on (within a second everywhere).

Options:
  --url URL               the deployment's address, such as https://runvil.example.workers.dev
  --token TOKEN           the root key (default: RUNVIL_API_TOKEN from the environment)
  --scope SCOPE           a scope of the new key (create; repeatable)
  --json                  print the API's JSON answer instead

Exit status: 0 done; 1 the deployment refused or could not be reached (the error says
what to do); 2 a usage error.
`;

const PACKS = `Usage: runvil packs accept VENDOR/NAME [--config FILE] [--json]
       runvil packs accept VENDOR/NAME --url URL [--token TOKEN] [--json]

An MCP Pack's tool definitions are pinned: the ones first seen (or runvil.yaml's pin:),
and a run that declares a Pack whose server now lists other definitions is refused,
naming the tools that changed. accept reads what the server lists now and pins that.

Without --url it accepts for this machine's runs (the pins in .runvil/pins.json beside
runvil.yaml, or the file --config names); with --url, for the deployment at URL, with its
root key (RUNVIL_API_TOKEN). A Pack runvil.yaml pins with pin: is not changed: set its
pin: to the digest the refusal names instead.

Options:
  --config FILE           the runvil.yaml to read (default ./runvil.yaml)
  --url URL               the deployment's address, such as https://runvil.example.workers.dev
  --token TOKEN           the root key (default: RUNVIL_API_TOKEN from the environment)
  --json                  print the answer as JSON

Exit status: 0 accepted; 1 it could not be (the error says why); 2 a usage error.
`;

const DEPLOY_CHECK = `Usage: runvil deploy-check --url URL [--token TOKEN] [--force] [--concurrency N] [--config FILE]

Before a deploy: replays every suspended run of the deployment at URL on this checkout's
build (its Engine, its Lua runtime, and the runvil.yaml about to be deployed), without
calling any tool, model or operator, and lists each run whose replay would not reproduce
its journal: its id, its prompt, the build it started on beside this one, and the first
step that differs (the section, the effect, what the journal recorded and what is asked
now). Such a run would fail with Determinism when it resumes after the deploy.

A run always resumes on the prompt source it started with, so an edited prompt breaks no
run in flight: a note says how many runs of each prompt in prompts/ started on another
version of it. What can break a run is the Engine, the Lua runtime and the configuration.

The runs are read with GET /runs?status=suspended and GET /runs/:id/journal (the root key,
RUNVIL_API_TOKEN, or any key with runs:read) and replayed in threads, one per core (this
one starts at once, the others join as they load); a progress bar goes to standard error
when it is a terminal, a count line otherwise.

Options:
  --url URL               the deployment's address, such as https://runvil.example.workers.dev
  --token TOKEN           the key (default: RUNVIL_API_TOKEN from the environment)
  --force                 exit 0 even when runs would break (saying that it goes ahead)
  --concurrency N         replay threads, this one included (default: the machine's cores)
  --config FILE           the configuration about to be deployed (default: the file
                          RUNVIL_CONFIG names, else ./runvil.yaml when present)

Exit status: 0 every run reproduces (or --force); 1 a run would break, or the deployment
could not be read (the error says what to do); 2 a usage error.
`;

/** The help text of a command, or the overview. */
export function helpText(topic?: string): string {
  switch (topic) {
    case 'run':
      return RUN;
    case 'check':
      return CHECK;
    case 'test':
      return TEST;
    case 'keys':
      return KEYS;
    case 'packs':
      return PACKS;
    case 'deploy-check':
      return DEPLOY_CHECK;
    default:
      return OVERVIEW;
  }
}
