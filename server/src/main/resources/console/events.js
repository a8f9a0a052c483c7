// The change stream (/roster/v1/admin/events), followed so that what a page shows stays current
// without a refresh.

import { state } from './common.js';

// Server-sent events read with fetch, not EventSource: an EventSource cannot send the
// Authorization header, and a token in its URL would reach history, proxies and logs. The stream
// is read as it arrives; when it ends (the server closes a stream that falls behind, or restarts)
// it is opened again after a pause that grows to 30 s and starts over once one opens.
export function openEvents() {
  closeEvents();
  const controller = new AbortController();
  const stream = { controller, retry: null, delay: 1000 };
  state.events = stream;
  const dispatch = (block) => {
    let type = 'message';
    const data = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue; // a comment: the server's ping
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') type = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length) onEvent(type, data.join('\n'));
  };
  const connect = async () => {
    try {
      const headers = { Accept: 'text/event-stream' };
      if (state.token) headers.Authorization = 'Bearer ' + state.token;
      const response = await fetch('/roster/v1/admin/events?' + new URLSearchParams({ namespaceId: state.ns }),
        { headers, cache: 'no-store', signal: controller.signal });
      if (!response.ok) throw new Error('the change stream answered ' + response.status);
      stream.delay = 1000;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffered = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffered = (buffered + value).replace(/\r\n?/g, '\n');
        let end;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          dispatch(buffered.slice(0, end));
          buffered = buffered.slice(end + 2);
        }
      }
    } catch (e) {
      if (controller.signal.aborted) return;
    }
    if (controller.signal.aborted) return;
    stream.retry = setTimeout(connect, stream.delay);
    stream.delay = Math.min(stream.delay * 2, 30000);
  };
  connect();
}

function onEvent(type, data) {
  if (type === 'service') {
    const change = JSON.parse(data);
    if (!state.refresh) return;
    // Changes that come together are shown together.
    clearTimeout(state.pending);
    state.pending = setTimeout(() => state.refresh && state.refresh(change), 15);
  } else if (type === 'drain') {
    const drain = JSON.parse(data);
    state.drains.set(drain.id, drain);
    if (state.onDrain) state.onDrain(drain);
  }
}

export function closeEvents() {
  if (state.events) {
    clearTimeout(state.events.retry);
    state.events.controller.abort();
  }
  state.events = null;
}
