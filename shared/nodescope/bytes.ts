/**
 * A small byte writer and reader (LEB128 varints in plain number arithmetic, UTF-8 strings) for
 * nodescope's packed items. Values are non-negative safe integers unless written with svarint.
 */

export class ByteWriter {
  private buf: Uint8Array;
  length = 0;

  constructor(initial = 1024) {
    this.buf = new Uint8Array(initial);
  }

  private ensure(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.length + n));
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  u8(v: number): void {
    this.ensure(1);
    this.buf[this.length++] = v & 0xff;
  }

  varint(v: number): void {
    if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`varint of ${v}`);
    this.ensure(8);
    while (v >= 0x80) {
      this.buf[this.length++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.length++] = v;
  }

  /** Zigzag-encoded signed integer. */
  svarint(v: number): void {
    this.varint(v >= 0 ? v * 2 : -v * 2 - 1);
  }

  bytes(b: Uint8Array): void {
    this.varint(b.length);
    this.ensure(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }

  raw(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }

  string(s: string): void {
    this.bytes(Buffer.from(s, 'utf8'));
  }

  finish(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

export class DecodeError extends Error {
  override name = 'DecodeError';
}

export class ByteReader {
  pos = 0;

  constructor(private readonly buf: Uint8Array) {}

  get done(): boolean {
    return this.pos >= this.buf.length;
  }

  u8(): number {
    if (this.pos >= this.buf.length) throw new DecodeError('truncated item');
    return this.buf[this.pos++] as number;
  }

  varint(): number {
    let v = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.u8();
      v += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return v;
      scale *= 0x80;
    }
    throw new DecodeError('varint too long');
  }

  svarint(): number {
    const z = this.varint();
    return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
  }

  bytes(): Uint8Array {
    const n = this.varint();
    if (this.pos + n > this.buf.length) throw new DecodeError('truncated item');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  raw(n: number): Uint8Array {
    if (this.pos + n > this.buf.length) throw new DecodeError('truncated item');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  string(): string {
    return Buffer.from(this.bytes()).toString('utf8');
  }
}
