import { z } from 'zod';
import type { ScheduleSpec } from './catalogue.js';
import { type DetailType, detailExamples, detailSchemas, EVENT_SOURCE, eventSchema } from './events.js';

/**
 * The contents of events/: a JSON Schema per detail-type (the whole EventBridge event) and a sample event
 * per detail-type and per schedule input. Generated from the catalogue, so they cannot disagree with it.
 */
export function eventFiles(schedules: readonly ScheduleSpec[]): Record<string, unknown> {
  const files: Record<string, unknown> = {};
  for (const detailType of Object.keys(detailSchemas) as DetailType[]) {
    files[`schemas/${detailType}.schema.json`] = {
      $id: `https://fleetscope.dev/events/${detailType}.schema.json`,
      title: detailType,
      ...z.toJSONSchema(eventSchema(detailType), { io: 'input' }),
    };
    files[`samples/${detailType}.json`] = {
      version: '0',
      id: '6a7e8feb-b491-4cf7-a9f1-bf3703467718',
      'detail-type': detailType,
      source: EVENT_SOURCE,
      account: '123456789012',
      time: '2026-11-21T10:00:00Z',
      region: 'eu-west-1',
      resources: [],
      detail: detailExamples[detailType],
    };
  }
  for (const schedule of schedules) {
    files[`samples/schedule-${schedule.id}.json`] = schedule.input;
  }
  return files;
}
