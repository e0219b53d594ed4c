// The fair player's search, in a Web Worker so the page stays responsive.
// Stopping a search terminates this worker (the page starts a fresh one).
import init, { decide } from "./pkg/drop7_web.js";
import type { AdviceReply, AdviceRequest } from "./types.js";

interface WorkerScope {
  onmessage: ((e: MessageEvent<AdviceRequest>) => void) | null;
  postMessage(msg: AdviceReply | { ready: true }): void;
}
const scope = self as unknown as WorkerScope;
const ready = init({ module_or_path: new URL("./pkg/drop7_web_bg.wasm", import.meta.url) });

scope.onmessage = async (e) => {
  const q = e.data;
  try {
    await ready;
    const t0 = performance.now();
    const record = JSON.parse(decide(q.board, q.next, q.rise, q.depth, q.strata));
    scope.postMessage({ id: q.id, ok: true, record, ms: performance.now() - t0 });
  } catch (err) {
    scope.postMessage({ id: q.id, ok: false, error: String((err as Error).message ?? err) });
  }
};
ready.then(() => scope.postMessage({ ready: true }));
