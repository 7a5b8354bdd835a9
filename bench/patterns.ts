/**
 * What metering the pattern functions costs: the sandbox's string.find/match/gmatch/gsub
 * (a TypeScript matcher that counts its steps, src/engine/lua/pattern-natives.ts) beside Lua's
 * own C functions, on the same calls in the same VM in this run. Work typical of a prompt:
 * picking fields out of a 10 KB page, trimming, splitting, replacing.
 * Run with `npm run bench` (BENCH_SCALE=0.1 for a quick pass).
 */
import wasmoon from 'wasmoon';
import { LuaPlatform } from '../src/engine/lua/vm.ts';

const scale = Number(process.env.BENCH_SCALE ?? '1') || 1;
const rounds = Math.max(5, Math.round(200 * scale));

const WORK = String.raw`
local find, match, gmatch, gsub = ...
local line = 'item %d: <b>price</b> 12.50 EUR, tags: alpha beta gamma; see https://example.com/p/%d\n'
local parts = {}
for i = 1, 100 do parts[i] = line:format(i, i) end
local page = table.concat(parts)
local sum, count = 0, 0
for _ = 1, ROUNDS do
  for price in gmatch(page, '(%d+%.%d+) EUR') do sum = sum + tonumber(price) end
  for url in gmatch(page, 'https?://[%w%./]+') do count = count + #url end
  local text = gsub(page, '<[^>]+>', '')
  count = count + #gsub(text, '%s+', ' ')
  local s, e = find(page, 'item 99:', 1, true)
  count = count + s + select(2, find(page, 'tags: (%a+)', e))
  count = count + #match('   padded text   ', '^%s*(.-)%s*$')
end
return sum + count
`;

const platform = await LuaPlatform.create(() => new wasmoon.LuaFactory());
const vm = await platform.newVm({});
vm.setPatternNatives('n_');
const chunk = (name: string, fns: string) => ({
  name,
  source: `return (function(...) ${WORK.replace('ROUNDS', String(rounds))} end)(${fns})`,
});
const metered = chunk('bench-patterns-metered', 'n_find, n_match, n_gmatch, n_gsub');
const native = chunk('bench-patterns-c', 'string.find, string.match, string.gmatch, string.gsub');

function time(source: { name: string; source: string }): { us: number; value: string } {
  const start = process.hrtime.bigint();
  const [value] = vm.runChunk(source);
  return { us: Number(process.hrtime.bigint() - start) / 1000, value: String(value) };
}

// Paired, in turn, so the machine's drift falls on both sides alike.
const ratios: number[] = [];
let meteredUs = 0;
let nativeUs = 0;
for (let i = 0; i < 9; i++) {
  const a = time(metered);
  const b = time(native);
  if (a.value !== b.value) throw new Error(`the metered functions answered ${a.value}, the C ones ${b.value}`);
  if (i < 2) continue; // warm-up
  ratios.push(a.us / b.us);
  meteredUs += a.us;
  nativeUs += b.us;
}
vm.close();
ratios.sort((x, y) => x - y);
const median = ratios[Math.floor(ratios.length / 2)]!;
const perRound = (us: number) => (us / ratios.length / rounds).toFixed(1);
console.log(`P1 pattern functions over a 10 KB page, ${rounds} rounds: metered ${perRound(meteredUs)} us/round, C ${perRound(nativeUs)} us/round`);
console.log(`P1 ratio metered / C: ${median.toFixed(2)}x (median of ${ratios.length} pairs)`);
console.log(`RESULT ${JSON.stringify({ p1_ratio: +median.toFixed(2) })}`);
