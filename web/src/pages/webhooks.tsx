export default function Page() { return <p>webhooks</p>; }
