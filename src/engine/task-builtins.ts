/**
 * The task built-ins as a model round advertises them ("Letting the model start tasks").
 */
import type { Json } from '../json/json.ts';

/** Each built-in's wire definition, in the order a round lists them. */
export const TASK_BUILTIN_TOOLS: { name: string; description: string; parameters: Json }[] = [
  {
    name: 'task',
    description: 'Start a task that runs a section of this prompt alongside you; answers with the task id, such as 0.0.',
    parameters: {
      type: 'object',
      properties: {
        target: { type: 'string', description: 'The heading of the section to run, such as "## Research".' },
        input: { description: 'Input for the task, any JSON value.' },
      },
      required: ['target'],
    },
  },
  {
    name: 'task_cancel',
    description: 'Cancel a running task you started.',
    parameters: { type: 'object', properties: { id: { type: 'string', description: 'The task id.' } }, required: ['id'] },
  },
  {
    name: 'task_status',
    description: 'Report whether a task you started is running, completed, failed or cancelled; without an id, every task you started.',
    parameters: { type: 'object', properties: { id: { type: 'string', description: 'The task id.' } } },
  },
  {
    name: 'await_tasks',
    description: 'Wait for tasks you started to finish and return their results; without ids, every task you started.',
    parameters: { type: 'object', properties: { ids: { type: 'array', items: { type: 'string' } } } },
  },
];
