// The SDK's batch processor reports its queue only through its self-observability
// metrics: a meter that listens to them, so the sink knows the queue's length.
import { createNoopMeter, type Attributes, type Counter, type Meter, type MeterProvider } from '@opentelemetry/api';

/**
 * The SDK's batch processor reports its queue only through its
 * self-observability metrics: otel.sdk.processor.span.processed (with
 * error.type=queue_full for what it drops) and otel.sdk.processor.span.queue.size.
 * A meter that feeds the first into our count and keeps the second's callback,
 * so a span that would only be dropped is not even built.
 */
export function queueWatch(onQueueFull: (n: number) => void): { meters: MeterProvider; length(): number } {
  const noop = createNoopMeter();
  const meter: Meter = Object.create(noop) as Meter;
  let observeQueue: ((result: { observe(value: number): void }) => void) | undefined;
  meter.createCounter = (name: string) => {
    if (name !== 'otel.sdk.processor.span.processed') return noop.createCounter(name);
    const counter: Counter = {
      add(value: number, attributes?: Attributes) {
        if (attributes?.['error.type'] === 'queue_full') onQueueFull(value);
      },
    };
    return counter;
  };
  meter.createObservableUpDownCounter = (name: string) => {
    const observable = noop.createObservableUpDownCounter(name);
    if (name !== 'otel.sdk.processor.span.queue.size') return observable;
    return Object.assign(Object.create(observable) as typeof observable, {
      addCallback: (cb: (result: { observe(value: number): void }) => void) => void (observeQueue = cb),
      removeCallback: () => void (observeQueue = undefined),
    });
  };
  return {
    meters: { getMeter: () => meter },
    length() {
      let n = 0;
      observeQueue?.({ observe: (v: number) => void (n = v) });
      return n;
    },
  };
}
