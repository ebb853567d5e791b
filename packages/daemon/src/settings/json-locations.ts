/**
 * JSON parsing that can say *where*: the line and column of a syntax error (V8's messages do
 * not always carry a position), and of every property, so schema errors can point at the key.
 * A small strict scanner (RFC 8259, no comments, no trailing commas) validates and records
 * positions; the value itself then comes from JSON.parse.
 */

export interface Position {
  readonly line: number;
  readonly column: number;
}

export type JsonParseResult =
  | { readonly ok: true; readonly value: unknown; locate(path: readonly PropertyKey[]): Position | undefined }
  | { readonly ok: false; readonly message: string; readonly position: Position };

class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

export function parseJsonWithLocations(text: string): JsonParseResult {
  const scanner = new Scanner(text);
  try {
    scanner.document();
  } catch (error) {
    if (error instanceof JsonSyntaxError) return { ok: false, message: error.message, position: positionAt(text, error.offset) };
    throw error;
  }
  const offsets = scanner.offsets;
  return {
    ok: true,
    value: JSON.parse(text) as unknown,
    locate: (path) => {
      // The nearest recorded ancestor: a missing key is reported at its parent object.
      for (let depth = path.length; depth >= 0; depth--) {
        const offset = offsets.get(pathKey(path.slice(0, depth)));
        if (offset !== undefined) return positionAt(text, offset);
      }
      return undefined;
    },
  };
}

/** 1-based line and column of a character offset. */
function positionAt(text: string, offset: number): Position {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

function pathKey(path: readonly PropertyKey[]): string {
  return JSON.stringify(path.map(String));
}

const NUMBER_RE = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

class Scanner {
  readonly offsets = new Map<string, number>();
  private i = 0;

  constructor(private readonly text: string) {}

  document(): void {
    this.whitespace();
    this.value([]);
    this.whitespace();
    if (this.i < this.text.length) this.fail(`unexpected ${this.describe()} after the end of the JSON value`);
  }

  private value(path: PropertyKey[]): void {
    if (!this.offsets.has(pathKey(path))) this.offsets.set(pathKey(path), this.i);
    const ch = this.text[this.i];
    if (ch === "{") return this.object(path);
    if (ch === "[") return this.array(path);
    if (ch === '"') {
      this.string();
      return;
    }
    if (ch === "t") return this.literal("true");
    if (ch === "f") return this.literal("false");
    if (ch === "n") return this.literal("null");
    if (ch === "-" || (ch !== undefined && ch >= "0" && ch <= "9")) return this.number();
    this.fail(
      this.i >= this.text.length ? "unexpected end of file: a value is missing" : `unexpected ${this.describe()}: expected a value`,
    );
  }

  private object(path: PropertyKey[]): void {
    this.i++; // {
    this.whitespace();
    if (this.text[this.i] === "}") {
      this.i++;
      return;
    }
    for (;;) {
      if (this.text[this.i] !== '"')
        this.fail(
          this.text[this.i] === "}" ? "trailing comma before '}'" : `expected a property name in double quotes, found ${this.describe()}`,
        );
      const keyStart = this.i;
      const key = JSON.parse(this.string()) as string;
      this.offsets.set(pathKey([...path, key]), keyStart);
      this.whitespace();
      if (this.text[this.i] !== ":") this.fail(`expected ':' after property name "${key}", found ${this.describe()}`);
      this.i++;
      this.whitespace();
      this.value([...path, key]);
      if (this.closes("}", `expected ',' or '}' after the value of "${key}"`)) return;
    }
  }

  private array(path: PropertyKey[]): void {
    this.i++; // [
    this.whitespace();
    if (this.text[this.i] === "]") {
      this.i++;
      return;
    }
    for (let index = 0; ; index++) {
      if (this.text[this.i] === "]") this.fail("trailing comma before ']'");
      this.value([...path, index]);
      if (this.closes("]", "expected ',' or ']' in the array")) return;
    }
  }

  /** After a member: consumes `close` (true) or a comma (false); anything else fails with `expected`. */
  private closes(close: "}" | "]", expected: string): boolean {
    this.whitespace();
    const next = this.text[this.i];
    if (next !== "," && next !== close) this.fail(`${expected}, found ${this.describe()}`);
    this.i++;
    if (next === close) return true;
    this.whitespace();
    return false;
  }

  /** Scans a string literal and returns its source text (quotes included). */
  private string(): string {
    const start = this.i;
    this.i++; // opening quote
    while (this.i < this.text.length) {
      const code = this.text.charCodeAt(this.i);
      if (code === 34) {
        this.i++;
        return this.text.slice(start, this.i);
      }
      if (code === 92) {
        const escaped = this.text[this.i + 1];
        if (escaped === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(this.text.slice(this.i + 2, this.i + 6))) this.fail("invalid \\u escape in a string");
          this.i += 6;
        } else if (escaped !== undefined && '"\\/bfnrt'.includes(escaped)) {
          this.i += 2;
        } else {
          this.fail("invalid escape in a string");
        }
        continue;
      }
      if (code < 32) this.fail(code === 10 ? "unterminated string (line break inside a string)" : "control character inside a string");
      this.i++;
    }
    this.i = start;
    this.fail("unterminated string");
  }

  private number(): void {
    NUMBER_RE.lastIndex = this.i;
    const match = NUMBER_RE.exec(this.text);
    if (!match) this.fail("invalid number");
    this.i += match[0].length;
  }

  private literal(word: string): void {
    if (this.text.startsWith(word, this.i)) {
      this.i += word.length;
      return;
    }
    this.fail(`unexpected ${this.describe()}: expected a value`);
  }

  private whitespace(): void {
    while (this.i < this.text.length) {
      const ch = this.text[this.i];
      if (ch === " " || ch === "\t" || ch === "\n" || ch === "\r") this.i++;
      else if (ch === "/" && (this.text[this.i + 1] === "/" || this.text[this.i + 1] === "*"))
        this.fail("comments are not allowed in JSON");
      else return;
    }
  }

  private describe(): string {
    if (this.i >= this.text.length) return "end of file";
    const word = /^[A-Za-z_][\w]*/.exec(this.text.slice(this.i, this.i + 20))?.[0];
    return word ? `'${word}'` : `'${this.text[this.i]}'`;
  }

  private fail(message: string): never {
    throw new JsonSyntaxError(message, this.i);
  }
}
