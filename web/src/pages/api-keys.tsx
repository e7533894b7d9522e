export default function Page() { return <p>api-keys</p>; }
