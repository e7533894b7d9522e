import * as z from 'zod';
import { parameterName, parameterText } from '../platform/validation.js';

/** A small module of its own: start-call's hot path imports it without the agent routes' schemas. */

export const MAX_PARAMETERS = 50;
export const MAX_PARAMETER_NAME = 64;
export const MAX_PARAMETER_VALUE = 1000;

/**
 * A call's `parameters` (start-call, campaign rows, the test chat): names as labels, values as text
 * without control or bidirectional characters (a builder: each schema module wraps it on first use).
 */
export const callParameters = () =>
  z
    .record(parameterName().min(1).max(MAX_PARAMETER_NAME), parameterText().max(MAX_PARAMETER_VALUE))
    .refine((value) => Object.keys(value).length <= MAX_PARAMETERS, {
      message: `at most ${MAX_PARAMETERS} parameters`,
    });
