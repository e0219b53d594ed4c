export class Advisor {
    worker = null;
    nextId = 1;
    pending = null;
    spawn() {
        const w = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
        w.onmessage = (e) => {
            const m = e.data;
            if (!("id" in m) || !this.pending || m.id !== this.pending.id)
                return;
            const p = this.pending;
            this.pending = null;
            if (m.ok)
                p.resolve({ record: m.record, ms: m.ms });
            else
                p.reject(new Error(m.error));
        };
        w.onerror = (e) => {
            const p = this.pending;
            this.pending = null;
            this.worker = null;
            p?.reject(new Error(`the search worker failed: ${e.message}`));
        };
        return w;
    }
    get busy() {
        return this.pending !== null;
    }
    /** Decides a position; resolves to null when stopped. */
    advise(q) {
        this.stop();
        if (!this.worker)
            this.worker = this.spawn();
        const id = this.nextId++;
        return new Promise((resolve, reject) => {
            this.pending = { id, resolve, reject };
            this.worker.postMessage({ ...q, id });
        });
    }
    /** Stops a running search at once (the worker is replaced). */
    stop() {
        if (!this.pending)
            return;
        const p = this.pending;
        this.pending = null;
        this.worker?.terminate();
        this.worker = null;
        p.resolve(null);
    }
}
