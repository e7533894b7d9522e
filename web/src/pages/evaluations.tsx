export default function Page() { return <p>evaluations</p>; }
