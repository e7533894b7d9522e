/**
 * Stands in for `jsonschema` in the Lambda bundles (BUNDLE_ALIASES in ../service-function.ts). ElectroDB
 * uses the package only to check models against its JSON schema: in the bundles the check of each entity
 * is skipped (functions/platform/table.ts, the models being checked by the tests, where the real package
 * runs), and the one other use, a Service asking whether each of its members is a raw model, gets "no":
 * the service's members are always built entities, which the real check also refuses as models. Saves
 * the package (~28 KB) and its work at every cold start.
 */
export class Validator {
  addSchema() {}
  validate() {
    return {
      errors: [
        { property: 'instance', message: 'is not checked in a bundle (models are checked by the tests)' },
      ],
    };
  }
}
Validator.prototype.customFormats = {};
