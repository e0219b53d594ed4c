let wasm;

const cachedTextDecoder = (typeof TextDecoder !== 'undefined' ? new TextDecoder('utf-8', { ignoreBOM: true, fatal: true }) : { decode: () => { throw Error('TextDecoder not available') } } );

if (typeof TextDecoder !== 'undefined') { cachedTextDecoder.decode(); };

let cachedUint8ArrayMemory0 = null;

function getUint8ArrayMemory0() {
    if (cachedUint8ArrayMemory0 === null || cachedUint8ArrayMemory0.byteLength === 0) {
        cachedUint8ArrayMemory0 = new Uint8Array(wasm.memory.buffer);
    }
    return cachedUint8ArrayMemory0;
}

function getStringFromWasm0(ptr, len) {
    ptr = ptr >>> 0;
    return cachedTextDecoder.decode(getUint8ArrayMemory0().subarray(ptr, ptr + len));
}

let WASM_VECTOR_LEN = 0;

const cachedTextEncoder = (typeof TextEncoder !== 'undefined' ? new TextEncoder('utf-8') : { encode: () => { throw Error('TextEncoder not available') } } );

const encodeString = (typeof cachedTextEncoder.encodeInto === 'function'
    ? function (arg, view) {
    return cachedTextEncoder.encodeInto(arg, view);
}
    : function (arg, view) {
    const buf = cachedTextEncoder.encode(arg);
    view.set(buf);
    return {
        read: arg.length,
        written: buf.length
    };
});

function passStringToWasm0(arg, malloc, realloc) {

    if (realloc === undefined) {
        const buf = cachedTextEncoder.encode(arg);
        const ptr = malloc(buf.length, 1) >>> 0;
        getUint8ArrayMemory0().subarray(ptr, ptr + buf.length).set(buf);
        WASM_VECTOR_LEN = buf.length;
        return ptr;
    }

    let len = arg.length;
    let ptr = malloc(len, 1) >>> 0;

    const mem = getUint8ArrayMemory0();

    let offset = 0;

    for (; offset < len; offset++) {
        const code = arg.charCodeAt(offset);
        if (code > 0x7F) break;
        mem[ptr + offset] = code;
    }

    if (offset !== len) {
        if (offset !== 0) {
            arg = arg.slice(offset);
        }
        ptr = realloc(ptr, len, len = offset + arg.length * 3, 1) >>> 0;
        const view = getUint8ArrayMemory0().subarray(ptr + offset, ptr + len);
        const ret = encodeString(arg, view);

        offset += ret.written;
        ptr = realloc(ptr, len, offset, 1) >>> 0;
    }

    WASM_VECTOR_LEN = offset;
    return ptr;
}

function takeFromExternrefTable0(idx) {
    const value = wasm.__wbindgen_export_0.get(idx);
    wasm.__externref_table_dealloc(idx);
    return value;
}
/**
 * Runs one golden search record (a `search.jsonl` line) with its own
 * config and the strict-LRU table at its capacity (0 = none), as the native
 * parity gate does; returns the decision as [`decide`] formats it, plus
 * `expectedScores`.
 *
 * # Errors
 * A record without the root or config fields.
 * @param {string} record
 * @returns {string}
 */
export function decideGolden(record) {
    let deferred3_0;
    let deferred3_1;
    try {
        const ptr0 = passStringToWasm0(record, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.decideGolden(ptr0, len0);
        var ptr2 = ret[0];
        var len2 = ret[1];
        if (ret[3]) {
            ptr2 = 0; len2 = 0;
            throw takeFromExternrefTable0(ret[2]);
        }
        deferred3_0 = ptr2;
        deferred3_1 = len2;
        return getStringFromWasm0(ptr2, len2);
    } finally {
        wasm.__wbindgen_free(deferred3_0, deferred3_1, 1);
    }
}

/**
 * The fair search's decision on a position, as `drop7 decide` prints it:
 * JSON `{action, completedDepth, values (16-hex-digit bit patterns or null),
 * valuesDecimal, work, nodes, cacheHits, cacheEntries, evictions, leafCalls,
 * moveCalls, ms}` (`ms` is 0: the caller times it). Table: the CLI's default
 * ([`TableSpec::default_for_depth`]: set-associative, 4 ways, 65,536 entries
 * up to depth 4 and 2^20 from depth 5), so the counters are `drop7 decide`'s
 * too. Spec: search.md.
 *
 * # Errors
 * A malformed board, `next` outside 1..=7, `rise` outside 1..=5, depth
 * outside 1..=8 or strata outside 1..=32, or a table the browser cannot allocate.
 * @param {string} board
 * @param {number} next
 * @param {number} rise
 * @param {number} depth
 * @param {number} strata
 * @returns {string}
 */
export function decide(board, next, rise, depth, strata) {
    let deferred3_0;
    let deferred3_1;
    try {
        const ptr0 = passStringToWasm0(board, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.decide(ptr0, len0, next, rise, depth, strata);
        var ptr2 = ret[0];
        var len2 = ret[1];
        if (ret[3]) {
            ptr2 = 0; len2 = 0;
            throw takeFromExternrefTable0(ret[2]);
        }
        deferred3_0 = ptr2;
        deferred3_1 = len2;
        return getStringFromWasm0(ptr2, len2);
    } finally {
        wasm.__wbindgen_free(deferred3_0, deferred3_1, 1);
    }
}

function passArray8ToWasm0(arg, malloc) {
    const ptr = malloc(arg.length * 1, 1) >>> 0;
    getUint8ArrayMemory0().set(arg, ptr / 1);
    WASM_VECTOR_LEN = arg.length;
    return ptr;
}
/**
 * `drop7 trace`'s lines (trace-format.md block 1, one JSON object a line,
 * `\n`-terminated) for the game of `seed` on the headless (or, if `stream`,
 * stream) driver playing `columns` in order; stops at the first illegal
 * column or at game over.
 * @param {number} seed
 * @param {boolean} stream
 * @param {Uint8Array} columns
 * @returns {string}
 */
export function traceLines(seed, stream, columns) {
    let deferred2_0;
    let deferred2_1;
    try {
        const ptr0 = passArray8ToWasm0(columns, wasm.__wbindgen_malloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.traceLines(seed, stream, ptr0, len0);
        deferred2_0 = ret[0];
        deferred2_1 = ret[1];
        return getStringFromWasm0(ret[0], ret[1]);
    } finally {
        wasm.__wbindgen_free(deferred2_0, deferred2_1, 1);
    }
}

/**
 * Whether `text` is a scripted round file (a JSON object whose `format` is
 * `drop7-scripted-round-v1`), to be played rather than replayed.
 * @param {string} text
 * @returns {boolean}
 */
export function isRoundFile(text) {
    const ptr0 = passStringToWasm0(text, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
    const len0 = WASM_VECTOR_LEN;
    const ret = wasm.isRoundFile(ptr0, len0);
    return ret !== 0;
}

/**
 * Validates a dropped file and turns it into replay steps: JSON
 * `{kind: "tape"|"trace", title, seed, start: state, steps: [step],
 * failure, note}` (see [`replay::Replay`]).
 *
 * # Errors
 * A message naming what is wrong and where (line, field, move).
 * @param {string} text
 * @returns {string}
 */
export function replayFile(text) {
    let deferred3_0;
    let deferred3_1;
    try {
        const ptr0 = passStringToWasm0(text, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.replayFile(ptr0, len0);
        var ptr2 = ret[0];
        var len2 = ret[1];
        if (ret[3]) {
            ptr2 = 0; len2 = 0;
            throw takeFromExternrefTable0(ret[2]);
        }
        deferred3_0 = ptr2;
        deferred3_1 = len2;
        return getStringFromWasm0(ptr2, len2);
    } finally {
        wasm.__wbindgen_free(deferred3_0, deferred3_1, 1);
    }
}

/**
 * Parses a seed in decimal or `0x` hex (a u32).
 *
 * # Errors
 * A message naming the text.
 * @param {string} text
 * @returns {number}
 */
export function parseSeed(text) {
    const ptr0 = passStringToWasm0(text, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
    const len0 = WASM_VECTOR_LEN;
    const ret = wasm.parseSeed(ptr0, len0);
    if (ret[2]) {
        throw takeFromExternrefTable0(ret[1]);
    }
    return ret[0] >>> 0;
}

function getArrayU8FromWasm0(ptr, len) {
    ptr = ptr >>> 0;
    return getUint8ArrayMemory0().subarray(ptr / 1, ptr / 1 + len);
}

const WebGameFinalization = (typeof FinalizationRegistry === 'undefined')
    ? { register: () => {}, unregister: () => {} }
    : new FinalizationRegistry(ptr => wasm.__wbg_webgame_free(ptr >>> 0, 1));
/**
 * A live game of Drop7 Hardcore: a seeded game (headless or stream driver)
 * or a scripted round (latent board mode).
 */
export class WebGame {

    static __wrap(ptr) {
        ptr = ptr >>> 0;
        const obj = Object.create(WebGame.prototype);
        obj.__wbg_ptr = ptr;
        WebGameFinalization.register(obj, obj.__wbg_ptr, obj);
        return obj;
    }

    __destroy_into_raw() {
        const ptr = this.__wbg_ptr;
        this.__wbg_ptr = 0;
        WebGameFinalization.unregister(this);
        return ptr;
    }

    free() {
        const ptr = this.__destroy_into_raw();
        wasm.__wbg_webgame_free(ptr, 0);
    }
    /**
     * Legal columns as a 7-bit mask (bit c = column c); 0 once the game is
     * over or a round's move cap is reached.
     * @returns {number}
     */
    legalMask() {
        const ret = wasm.webgame_legalMask(this.__wbg_ptr);
        return ret;
    }
    /**
     * A game of a `drop7-scripted-round-v1` round file (formats.md; latent
     * board mode: the round fixes every disc and every hidden gray value,
     * and its `maximumMoves` caps the game).
     *
     * # Errors
     * Not a round file, or what is wrong with it (field and index).
     * @param {string} text
     * @returns {WebGame}
     */
    static fromRound(text) {
        const ptr0 = passStringToWasm0(text, wasm.__wbindgen_malloc, wasm.__wbindgen_realloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.webgame_fromRound(ptr0, len0);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return WebGame.__wrap(ret[0]);
    }
    /**
     * A headless game of `seed` with `columns` (0..=6 each) already played.
     *
     * # Errors
     * Names the first move that cannot be played.
     * @param {number} seed
     * @param {Uint8Array} columns
     * @returns {WebGame}
     */
    static withMoves(seed, columns) {
        const ptr0 = passArray8ToWasm0(columns, wasm.__wbindgen_malloc);
        const len0 = WASM_VECTOR_LEN;
        const ret = wasm.webgame_withMoves(seed, ptr0, len0);
        if (ret[2]) {
            throw takeFromExternrefTable0(ret[1]);
        }
        return WebGame.__wrap(ret[0]);
    }
    /**
     * A new headless-driver game of `seed` (rules.md §6).
     * @param {number} seed
     */
    constructor(seed) {
        const ret = wasm.webgame_new(seed);
        this.__wbg_ptr = ret >>> 0;
        WebGameFinalization.register(this, this.__wbg_ptr, this);
        return this;
    }
    /**
     * Plays `column` (0..=6): the step as JSON `{column, disc, frames,
     * scoreDelta, levelAdvanced, clearedBoard, terminal, maxDepth, state}`.
     *
     * # Errors
     * A full column, an out-of-range column, a finished game or a round's
     * move cap; nothing changes.
     * @param {number} column
     * @returns {string}
     */
    play(column) {
        let deferred2_0;
        let deferred2_1;
        try {
            const ret = wasm.webgame_play(this.__wbg_ptr, column);
            var ptr1 = ret[0];
            var len1 = ret[1];
            if (ret[3]) {
                ptr1 = 0; len1 = 0;
                throw takeFromExternrefTable0(ret[2]);
            }
            deferred2_0 = ptr1;
            deferred2_1 = len1;
            return getStringFromWasm0(ptr1, len1);
        } finally {
            wasm.__wbindgen_free(deferred2_0, deferred2_1, 1);
        }
    }
    /**
     * The game seed (a round's `generatorSeedHex`).
     * @returns {number}
     */
    seed() {
        const ret = wasm.webgame_seed(this.__wbg_ptr);
        return ret >>> 0;
    }
    /**
     * Takes back the last move (replays the game without it); false if none.
     * @returns {boolean}
     */
    undo() {
        const ret = wasm.webgame_undo(this.__wbg_ptr);
        return ret !== 0;
    }
    /**
     * The state as JSON `{board, next, score, level, movesRemaining, moves, gameOver}`.
     * @returns {string}
     */
    state() {
        let deferred1_0;
        let deferred1_1;
        try {
            const ret = wasm.webgame_state(this.__wbg_ptr);
            deferred1_0 = ret[0];
            deferred1_1 = ret[1];
            return getStringFromWasm0(ret[0], ret[1]);
        } finally {
            wasm.__wbindgen_free(deferred1_0, deferred1_1, 1);
        }
    }
    /**
     * The columns played so far.
     * @returns {Uint8Array}
     */
    columns() {
        const ret = wasm.webgame_columns(this.__wbg_ptr);
        var v1 = getArrayU8FromWasm0(ret[0], ret[1]).slice();
        wasm.__wbindgen_free(ret[0], ret[1] * 1, 1);
        return v1;
    }
    /**
     * The round's move cap (`maximumMoves`), or `undefined` for a seeded game.
     * @returns {number | undefined}
     */
    moveCap() {
        const ret = wasm.webgame_moveCap(this.__wbg_ptr);
        return ret === 0x100000001 ? undefined : ret;
    }
    /**
     * The round's id (`gauntlet-01`, …), or `undefined` for a seeded game.
     * @returns {string | undefined}
     */
    roundId() {
        const ret = wasm.webgame_roundId(this.__wbg_ptr);
        let v1;
        if (ret[0] !== 0) {
            v1 = getStringFromWasm0(ret[0], ret[1]).slice();
            wasm.__wbindgen_free(ret[0], ret[1] * 1, 1);
        }
        return v1;
    }
    /**
     * A new game with the same luck (seed and driver, or round), no move played.
     * @returns {WebGame}
     */
    restarted() {
        const ret = wasm.webgame_restarted(this.__wbg_ptr);
        return WebGame.__wrap(ret);
    }
}

async function __wbg_load(module, imports) {
    if (typeof Response === 'function' && module instanceof Response) {
        if (typeof WebAssembly.instantiateStreaming === 'function') {
            try {
                return await WebAssembly.instantiateStreaming(module, imports);

            } catch (e) {
                if (module.headers.get('Content-Type') != 'application/wasm') {
                    console.warn("`WebAssembly.instantiateStreaming` failed because your server does not serve Wasm with `application/wasm` MIME type. Falling back to `WebAssembly.instantiate` which is slower. Original error:\n", e);

                } else {
                    throw e;
                }
            }
        }

        const bytes = await module.arrayBuffer();
        return await WebAssembly.instantiate(bytes, imports);

    } else {
        const instance = await WebAssembly.instantiate(module, imports);

        if (instance instanceof WebAssembly.Instance) {
            return { instance, module };

        } else {
            return instance;
        }
    }
}

function __wbg_get_imports() {
    const imports = {};
    imports.wbg = {};
    imports.wbg.__wbindgen_error_new = function(arg0, arg1) {
        const ret = new Error(getStringFromWasm0(arg0, arg1));
        return ret;
    };
    imports.wbg.__wbindgen_init_externref_table = function() {
        const table = wasm.__wbindgen_export_0;
        const offset = table.grow(4);
        table.set(0, undefined);
        table.set(offset + 0, undefined);
        table.set(offset + 1, null);
        table.set(offset + 2, true);
        table.set(offset + 3, false);
        ;
    };
    imports.wbg.__wbindgen_throw = function(arg0, arg1) {
        throw new Error(getStringFromWasm0(arg0, arg1));
    };

    return imports;
}

function __wbg_init_memory(imports, memory) {

}

function __wbg_finalize_init(instance, module) {
    wasm = instance.exports;
    __wbg_init.__wbindgen_wasm_module = module;
    cachedUint8ArrayMemory0 = null;


    wasm.__wbindgen_start();
    return wasm;
}

function initSync(module) {
    if (wasm !== undefined) return wasm;


    if (typeof module !== 'undefined') {
        if (Object.getPrototypeOf(module) === Object.prototype) {
            ({module} = module)
        } else {
            console.warn('using deprecated parameters for `initSync()`; pass a single object instead')
        }
    }

    const imports = __wbg_get_imports();

    __wbg_init_memory(imports);

    if (!(module instanceof WebAssembly.Module)) {
        module = new WebAssembly.Module(module);
    }

    const instance = new WebAssembly.Instance(module, imports);

    return __wbg_finalize_init(instance, module);
}

async function __wbg_init(module_or_path) {
    if (wasm !== undefined) return wasm;


    if (typeof module_or_path !== 'undefined') {
        if (Object.getPrototypeOf(module_or_path) === Object.prototype) {
            ({module_or_path} = module_or_path)
        } else {
            console.warn('using deprecated parameters for the initialization function; pass a single object instead')
        }
    }

    if (typeof module_or_path === 'undefined') {
        module_or_path = new URL('drop7_web_bg.wasm', import.meta.url);
    }
    const imports = __wbg_get_imports();

    if (typeof module_or_path === 'string' || (typeof Request === 'function' && module_or_path instanceof Request) || (typeof URL === 'function' && module_or_path instanceof URL)) {
        module_or_path = fetch(module_or_path);
    }

    __wbg_init_memory(imports);

    const { instance, module } = await __wbg_load(await module_or_path, imports);

    return __wbg_finalize_init(instance, module);
}

export { initSync };
export default __wbg_init;
