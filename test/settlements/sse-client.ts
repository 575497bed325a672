/** One Server-Sent Event as a client sees it (comments kept apart: the heartbeats). */
export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

/**
 * Reads a text/event-stream body event by event, as EventSource would (the parts this feed
 * uses: id, event, data, comments). `next()` resolves with the next event; comments are counted.
 */
export function sseReader(body: ReadableStream<Uint8Array>) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const comments: string[] = [];

  function parse(block: string): SseEvent | null {
    const event: SseEvent = { data: "" };
    let isEvent = false;
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) {
        comments.push(line.slice(1).trim());
        continue;
      }
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "id") event.id = value;
      else if (field === "event") event.event = value;
      else if (field === "data") event.data += event.data ? `\n${value}` : value;
      else continue;
      isEvent = true;
    }
    return isEvent ? event : null;
  }

  async function next(): Promise<SseEvent | null> {
    for (;;) {
      const end = buffer.indexOf("\n\n");
      if (end !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = parse(block);
        if (event) return event;
        continue;
      }
      const { value, done } = await reader.read();
      if (done) return null;
      buffer += decoder.decode(value, { stream: true });
    }
  }

  return {
    next,
    comments,
    /** Reads on (events are kept for `next`) until a comment equal to `text` has arrived. */
    async untilComment(text: string): Promise<void> {
      while (!comments.includes(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before the comment "${text}"`);
        buffer += decoder.decode(value, { stream: true });
        // Comments are parsed as blocks complete; events stay in the buffer for next().
        let end = buffer.indexOf("\n\n");
        let rest = "";
        while (end !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (block.split("\n").every((line) => line.startsWith(":"))) parse(block);
          else rest += `${block}\n\n`;
          end = buffer.indexOf("\n\n");
        }
        buffer = rest + buffer;
      }
    },
    cancel: () => reader.cancel().catch(() => {}),
  };
}
