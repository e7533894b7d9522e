/**
 * Lambda runs Node 22+, this machine may run Node 20: the AWS SDK's warning about it is known and says
 * nothing to a developer of this project. The SDK checks the variable when its modules load, so this
 * module must be the first import of every local entry point (ESM evaluates imports in order).
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
