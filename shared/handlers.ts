/**
 * The Lambda handler kit (shared/platform/handler.ts) bound to every capability fleetscope ships, so each
 * capability's invocation context wraps every handler. Handlers in functions/ import from here.
 */
import { CAPABILITIES } from './capabilities.js';
import { handlerKit } from './platform/handler.js';

export const { scheduledHandler, eventHandler } = handlerKit(CAPABILITIES);
