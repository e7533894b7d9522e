export default function Page() { return <p>workflows</p>; }
